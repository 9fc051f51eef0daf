// Importers of AMD's published formats (BRIEF §2, docs/corpus.md "Import"): SFT
// samples, veRL RL rows, AIG-Datasets v0.1 trees and v0.2 unified JSON.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

#include "corpus/import_sink.h"
#include "llm/answer.h"
#include "util/files.h"
#include "util/json_parse.h"
#include "util/sha256.h"

namespace kvault::corpus {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kPythonTags = {"python", "py", "python3"};

std::optional<double> NumberField(const Json& o, const char* key) {
  auto it = o.find(key);
  if (it != o.end() && it->is_number()) return it->get<double>();
  return std::nullopt;
}

// The first string field of `keys` that is present and not empty.
std::string FirstText(const Json& o, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    std::string v = TextField(o, k);
    if (!v.empty()) return v;
  }
  return "";
}

// The first of `keys` present (not null) in `o` whose value `is` rejects, as an error
// naming it and `what` it should be; "" when every one is fine or absent.
template <typename Is>
std::string WrongType(const Json& o, std::initializer_list<const char*> keys, Is is, const char* what) {
  for (const char* k : keys) {
    auto it = o.find(k);
    if (it != o.end() && !it->is_null() && !is(*it)) return std::string(k) + ": not " + what;
  }
  return "";
}

// Results carried by a row: the vault's own ("results": a list, or its JSON text),
// else an imported verdict from AMD's fields (pass_exe / correct, speedup, hardware).
// A verdict field of the wrong type (pass_exe "yes", speedup "fast") is an error, not
// a verdict quietly dropped.
Result<std::vector<VerificationResult>> ResultsOf(const Json& meta, const std::string& where) {
  std::vector<VerificationResult> out;
  for (const std::string& wrong :
       {WrongType(meta, {"pass_exe", "correct", "match_ok"}, [](const Json& j) { return j.is_boolean(); },
                  "true or false"),
        WrongType(meta, {"speedup", "reference_ms", "candidate_ms"}, [](const Json& j) { return j.is_number(); },
                  "a number"),
        WrongType(meta, {"hardware", "gpu", "device", "toolchain", "backend", "verified_at"},
                  [](const Json& j) { return j.is_string(); }, "text")})
    if (!wrong.empty()) return Error{where + wrong};
  Json list = meta.contains("results") ? meta["results"] : Json();
  if (list.is_string()) {
    auto parsed = ParseJson(list.get<std::string>());
    if (!parsed) return Error{"results: " + parsed.error()};
    list = std::move(*parsed);
  }
  if (list.is_array()) {
    for (const Json& j : list) {
      auto r = ResultFromJson(j);
      if (!r) return Error{r.error()};
      out.push_back(std::move(*r));
    }
    return out;
  }
  const Json* verdict = nullptr;
  for (const char* k : {"pass_exe", "correct", "match_ok"}) {
    auto it = meta.find(k);
    if (it != meta.end() && it->is_boolean()) {
      verdict = &*it;
      break;
    }
  }
  if (!verdict) return out;
  VerificationResult v;
  v.hardware = FirstText(meta, {"hardware", "gpu", "device"});
  v.toolchain = TextField(meta, "toolchain");
  v.backend = TextField(meta, "backend");
  v.status = verdict->get<bool>() ? "passed" : "failed";
  v.speedup = NumberField(meta, "speedup");
  v.reference_ms = NumberField(meta, "reference_ms");
  v.candidate_ms = NumberField(meta, "candidate_ms");
  v.verified_at = TextField(meta, "verified_at");
  out.push_back(std::move(v));
  return out;
}

// The user and assistant contents of a chat ("" for one that is missing).
std::pair<std::string, std::string> ChatTurns(const Json& messages) {
  std::string user, assistant;
  for (const Json& m : messages) {
    if (!m.is_object()) continue;
    const std::string role = TextField(m, "role");
    if (role == "user" && user.empty()) user = TextField(m, "content");
    if (role == "assistant") assistant = TextField(m, "content");
  }
  return {user, assistant};
}

void SetKind(KernelRecord& r, const std::string& language_hint) {
  SourceKind k = DetectSourceKind(r.candidate_source, language_hint);
  r.language = k.language;
  r.format = k.format;
}

// Fields the vault's own exports add beside AMD's (so a round trip keeps them).
void ReadVaultExtras(const Json& o, KernelRecord& r) {
  if (std::string v = TextField(o, "format"); !v.empty()) r.format = v;
  if (std::string v = TextField(o, "arch"); !v.empty()) r.arch = v;
  if (std::string v = TextField(o, "model"); !v.empty()) r.provenance.model = v;
  if (std::string v = TextField(o, "pipeline"); !v.empty()) r.provenance.pipeline = v;
  if (std::string v = TextField(o, "parent_id"); !v.empty()) r.provenance.parent_id = v;
  if (std::string v = TextField(o, "source"); !v.empty()) r.provenance.source = v;
  if (std::string v = TextField(o, "license"); !v.empty()) r.provenance.license = v;
}

// `where`: the object `meta` is in the row ("metadata.", "extra_info.", "" for the row).
Status AddWithResults(KernelRecord r, const Json& meta, const std::string& where, const std::string& path,
                      int64_t line, ImportSink& sink) {
  auto results = ResultsOf(meta, where);
  if (!results) {
    sink.Malformed(path, line, results.error());
    return Status::Ok();
  }
  r.results = std::move(*results);
  return sink.Add(std::move(r), path, line);
}

Status SftRow(const Json& row, int64_t line, const std::string& path, ImportSink& sink) {
  auto messages = row.find("messages");
  if (messages == row.end() || !messages->is_array()) {
    sink.Malformed(path, line, "messages: not a list");
    return Status::Ok();
  }
  if (std::string wrong = WrongType(row, {"metadata"}, [](const Json& j) { return j.is_object(); }, "an object");
      !wrong.empty()) {
    sink.Malformed(path, line, wrong);
    return Status::Ok();
  }
  const Json meta = row.contains("metadata") && row["metadata"].is_object() ? row["metadata"] : Json::object();
  auto [user, assistant] = ChatTurns(*messages);
  if (assistant.empty()) {
    sink.Malformed(path, line, "no assistant message");
    return Status::Ok();
  }
  const std::string language = FirstText(meta, {"language", "lang"});
  auto code = llm::ExtractCode(assistant, llm::ExtractOptions{});
  if (!code) {
    sink.Malformed(path, line, "assistant message: " + code.error());
    return Status::Ok();
  }
  KernelRecord r;
  r.task.name = FirstText(meta, {"kernel_name", "task_name", "name"});
  r.task.reference_source = FencedBlock(user, kPythonTags);
  // gen's template puts a newline after the task's own last one; the vault's exports
  // name the reference's hash, so the exact bytes come back.
  const std::string& ref = r.task.reference_source;
  if (const std::string want = TextField(meta, "reference_sha256");
      !want.empty() && ref.ends_with("\n\n") && Sha256Hex(ref) != want && Sha256Hex(ref.substr(0, ref.size() - 1)) == want)
    r.task.reference_source.pop_back();
  r.candidate_source = code->code;
  SetKind(r, language.empty() ? code->fence_language == "hip" ? "hip" : "" : language);
  r.provenance.pipeline = "sft";
  r.provenance.prompt = user;
  r.provenance.source = "sft";
  ReadVaultExtras(meta, r);
  return AddWithResults(std::move(r), meta, "metadata.", path, line, sink);
}

// AMD's ground truth: a dict, or its JSON text; also under reward_model.
Result<Json> GroundTruth(const Json& row) {
  auto found = row.find("reward_model");
  if (found == row.end() || found->is_null())
    return Error{"reward_model: missing (a veRL row holds reward_model.ground_truth)"};
  Json model = *found;
  if (model.is_string()) {  // a Parquet column of JSON text, as some datasets store it
    auto parsed = ParseJson(model.get<std::string>());
    if (!parsed || !parsed->is_object()) return Error{"reward_model: a string but not a JSON object"};
    model = std::move(*parsed);
  }
  if (!model.is_object()) return Error{"reward_model: not an object"};
  const Json* rm = &model;
  auto gt = rm->find("ground_truth");
  if (gt == rm->end()) return Error{"reward_model.ground_truth: missing"};
  if (gt->is_string()) {
    auto parsed = ParseJson(gt->get<std::string>());
    if (!parsed || !parsed->is_object()) return Error{"reward_model.ground_truth: a string but not a JSON object"};
    return *parsed;
  }
  if (!gt->is_object()) return Error{"reward_model.ground_truth: not an object"};
  return *gt;
}

Status VerlRow(const Json& row, int64_t line, const std::string& path, ImportSink& sink) {
  auto gt = GroundTruth(row);
  if (!gt) {
    sink.Malformed(path, line, gt.error());
    return Status::Ok();
  }
  Json extra = row.contains("extra_info") && !row["extra_info"].is_null() ? row["extra_info"] : Json::object();
  if (extra.is_string()) {  // JSON text, as a Parquet column of mixed rows may hold it
    auto parsed = ParseJson(extra.get<std::string>());
    extra = parsed && parsed->is_object() ? std::move(*parsed) : Json();
  }
  KernelRecord r;
  if (auto code = gt->find("hip_code"); code != gt->end() && !code->is_null() && !code->is_string()) {
    sink.Malformed(path, line, "reward_model.ground_truth.hip_code: not a string");
    return Status::Ok();
  }
  // A column of the wrong type is said, not read as absent.
  for (const std::string& wrong :
       {std::string(extra.is_object() ? "" : "extra_info: not an object (or its JSON text)"),
        WrongType(row, {"prompt"}, [](const Json& j) { return j.is_array(); }, "a list of messages"),
        WrongType(row, {"data_source"}, [](const Json& j) { return j.is_string(); }, "text"),
        WrongType(*gt, {"pytorch_module_code", "task_source", "kernel_name", "task_name", "language", "lang"},
                  [](const Json& j) { return j.is_string(); }, "text")})
    if (!wrong.empty()) {
      sink.Malformed(path, line, wrong.starts_with("extra_info") || wrong.starts_with("prompt") ||
                                         wrong.starts_with("data_source")
                                     ? wrong
                                     : "reward_model.ground_truth." + wrong);
      return Status::Ok();
    }
  r.candidate_source = TextField(*gt, "hip_code");
  if (r.candidate_source.empty()) {
    sink.Skip(path, line, "no kernel (ground_truth.hip_code empty): a task-only row");
    return Status::Ok();
  }
  r.task.name = FirstText(*gt, {"kernel_name", "task_name"});
  if (r.task.name.empty()) r.task.name = FirstText(extra, {"kernel_name", "task_name"});
  r.task.reference_source = FirstText(*gt, {"pytorch_module_code", "task_source"});
  SetKind(r, FirstText(*gt, {"language", "lang"}).empty() ? "hip" : FirstText(*gt, {"language", "lang"}));
  r.provenance.pipeline = "verl";
  r.provenance.source = TextField(row, "data_source");
  if (row.contains("prompt") && row["prompt"].is_array()) r.provenance.prompt = ChatTurns(row["prompt"]).first;
  ReadVaultExtras(extra, r);
  return AddWithResults(std::move(r), extra, "extra_info.", path, line, sink);
}

Status AigV02Row(const Json& row, int64_t line, const std::string& path, ImportSink& sink) {
  if (std::string wrong = WrongType(row, {"answer_code", "question_code", "kernel_name", "task_name", "language",
                                          "lang"},
                                    [](const Json& j) { return j.is_string(); }, "text");
      !wrong.empty()) {
    sink.Malformed(path, line, wrong);
    return Status::Ok();
  }
  KernelRecord r;
  r.candidate_source = TextField(row, "answer_code");
  if (r.candidate_source.empty()) {
    sink.Malformed(path, line, "answer_code: missing or empty");
    return Status::Ok();
  }
  r.task.reference_source = TextField(row, "question_code");
  r.task.name = FirstText(row, {"kernel_name", "task_name", "name", "id"});
  if (r.task.name.empty()) r.task.name = fs::path(path).stem().string() + "_" + std::to_string(line);
  SetKind(r, FirstText(row, {"language", "lang"}));
  r.provenance.pipeline = "aig-v0.2";
  for (const char* k : {"provenance", "source", "reference"}) {
    auto it = row.find(k);
    if (it == row.end() || it->is_null()) continue;
    r.provenance.source = it->is_string() ? it->get<std::string>() : DumpJson(*it);
    break;
  }
  if (r.provenance.source.empty()) r.provenance.source = "AIG-Datasets v0.2";
  return AddWithResults(std::move(r), row, "", path, line, sink);
}

std::vector<fs::path> SortedEntries(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

Status AigV01Kernel(const fs::path& root, const fs::path& dir, ImportSink& sink) {
  const std::string id = dir.filename().string();
  const fs::path ref_path = root / "pytorch_code_module" / ("py_" + id + ".py");
  auto reference = ReadFile(ref_path.string());
  if (!reference) {
    sink.Malformed(dir.string(), 0, "no reference " + ref_path.string());
    return Status::Ok();
  }
  Json info = Json::object();
  const fs::path info_path = dir / "info.json";
  if (FileExists(info_path.string())) {
    auto text = ReadFile(info_path.string());
    auto parsed = text ? ParseJson(*text) : Result<Json>(Error{text.error()});
    if (!parsed || !parsed->is_object()) {
      sink.Malformed(info_path.string(), 0, parsed ? "not a JSON object" : parsed.error());
      return Status::Ok();
    }
    info = std::move(*parsed);
  }
  bool any = false;
  for (const fs::path& file : SortedEntries(dir)) {
    if (file.extension() != ".hip") continue;
    auto source = ReadFile(file.string());
    if (!source) {
      sink.Malformed(file.string(), 0, source.error());
      continue;
    }
    any = true;
    KernelRecord r;
    r.task.name = FirstText(info, {"kernel_name", "name"});
    if (r.task.name.empty()) r.task.name = id;
    r.task.reference_source = *reference;
    r.candidate_source = *source;
    SetKind(r, "hip");
    r.provenance.pipeline = "aig-v0.1";
    r.provenance.source = "AIG-Datasets v0.1";
    if (Status s = AddWithResults(std::move(r), info, "info.json: ", file.string(), 0, sink); !s) return s;
  }
  if (!any) sink.Skip(dir.string(), 0, "no .hip file");
  return Status::Ok();
}

}  // namespace

Status ImportSftFile(const std::string& path, ImportSink& sink) {
  return ForEachJsonLine(path, sink, [&](const Json& row, int64_t line) { return SftRow(row, line, path, sink); });
}

// Parquet files begin with the magic bytes PAR1; anything else is read as JSON Lines.
bool IsParquetFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && std::string_view(magic, 4) == "PAR1";
}

Status ImportVerlFile(const std::string& path, ImportSink& sink) {
  if (!IsParquetFile(path)) {
    // A file named Parquet that is not (text, an HTML error page saved as .parquet) is
    // said as such, not read as JSON Lines that all fail to parse.
    std::string ext = fs::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    std::error_code ec;
    if ((ext == ".parquet" || ext == ".pq") && fs::file_size(path, ec) > 0)
      return Error{path + ": not a Parquet file (a Parquet file begins with PAR1; this one does not: "
                          "text, or another format; JSON Lines are read from a file of another name)"};
    return ForEachJsonLine(path, sink, [&](const Json& row, int64_t line) { return VerlRow(row, line, path, sink); });
  }
  auto rows = ReadParquetRows(sink.options().python, path);
  if (!rows) return Error{rows.error()};
  for (size_t i = 0; i < rows->size(); ++i) {
    const int64_t row_number = static_cast<int64_t>(i) + 1;
    auto row = ParseJson((*rows)[i]);
    if (!row || !row->is_object()) {
      sink.Malformed(path, row_number, "not a row object");
      continue;
    }
    if (Status s = VerlRow(*row, row_number, path, sink); !s) return s;
  }
  return Status::Ok();
}

Status ImportAigV02File(const std::string& path, ImportSink& sink) {
  auto row = [&](const Json& r, int64_t line) { return AigV02Row(r, line, path, sink); };
  if (!path.ends_with(".json")) return ForEachJsonLine(path, sink, row);
  auto text = ReadFile(path);
  if (!text) return Error{text.error()};
  auto parsed = ParseJson(*text);
  if (!parsed || !parsed->is_array()) {
    sink.Malformed(path, 0, parsed ? "not a JSON array" : parsed.error());
    return Status::Ok();
  }
  for (size_t i = 0; i < parsed->size(); ++i) {
    const int64_t element = static_cast<int64_t>(i) + 1;
    if (!(*parsed)[i].is_object()) {
      sink.Malformed(path, element, "not a JSON object");
      continue;
    }
    if (Status s = row((*parsed)[i], element); !s) return s;
  }
  return Status::Ok();
}

Status ImportAigV01Tree(const std::string& path, ImportSink& sink) {
  const fs::path root(path), kernels = fs::path(path) / "hip_opt";
  if (!fs::is_directory(kernels)) return Error{path + ": not an AIG-Datasets v0.1 tree (no hip_opt/)"};
  for (const fs::path& dir : SortedEntries(kernels)) {
    if (!fs::is_directory(dir)) continue;
    if (Status s = AigV01Kernel(root, dir, sink); !s) return s;
  }
  return Status::Ok();
}

}  // namespace kvault::corpus
