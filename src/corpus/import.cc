#include "corpus/import.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

#include "candidate/candidate.h"
#include "candidate/source_language.h"
#include "corpus/import_sink.h"
#include "util/json_parse.h"
#include "corpus/names.h"
#include "util/strings.h"

namespace kvault::corpus {
namespace {

constexpr Named<ImportFormat> kFormats[] = {
    {ImportFormat::kStore, "store"},       {ImportFormat::kGeak, "geak"},
    {ImportFormat::kVerl, "verl"},         {ImportFormat::kSft, "sft"},
    {ImportFormat::kAigV01, "aig-v0.1"},   {ImportFormat::kAigV02, "aig-v0.2"},
    {ImportFormat::kKernelBench, "kernelbench"}, {ImportFormat::kRecords, "records"},
};

Json ProblemsJson(const std::vector<ImportProblem>& problems) {
  Json out = Json::array();
  for (const ImportProblem& p : problems) out.push_back({{"file", p.file}, {"line", p.line}, {"why", p.why}});
  return out;
}

Status ImportOne(const std::string& path, ImportSink& sink) {
  switch (sink.options().format) {
    case ImportFormat::kStore: return ImportStoreFile(path, sink);
    case ImportFormat::kGeak: return ImportGeakFolder(path, sink);
    case ImportFormat::kVerl: return ImportVerlFile(path, sink);
    case ImportFormat::kSft: return ImportSftFile(path, sink);
    case ImportFormat::kAigV01: return ImportAigV01Tree(path, sink);
    case ImportFormat::kAigV02: return ImportAigV02File(path, sink);
    case ImportFormat::kKernelBench: return ImportKernelBenchFolder(path, sink);
    case ImportFormat::kRecords: return ImportRecordsFile(path, sink);
  }
  return Error{"unknown import format"};
}

// A file name whose extension makes the candidate loader look at the content the way
// `language` needs.
const char* ProbeName(const std::string& source, const std::string& language) {
  if (language == "triton" || language == "python") return "kernel.py";
  if (language == "hip") return "kernel.hip";
  if (language == "cuda") return "kernel.cu";
  if (language == "cpp") return "kernel.cpp";
  // No language given: the content's own, by the rule kvault serve follows too.
  const std::string detected = DetectSourceLanguage(source);
  return detected == "python" ? "kernel.py" : detected == "hip" ? "kernel.hip" : detected == "cuda" ? "kernel.cu" : "kernel.cpp";
}

}  // namespace

std::optional<ImportFormat> ImportFormatFromString(std::string_view name) { return FromName(kFormats, name); }

std::string ImportFormatNames() { return NamesOf(kFormats); }

Json ImportReport::ToJson() const {
  return {{"imported", imported},
          {"skipped", skipped.size()},
          {"malformed", malformed.size()},
          {"skipped_rows", ProblemsJson(skipped)},
          {"malformed_rows", ProblemsJson(malformed)},
          {"empty_paths", empty_paths}};
}

Result<ImportReport> ImportPaths(CorpusStore& vault, const ImportOptions& options,
                                 const std::vector<std::string>& paths) {
  // Every path is checked before any is read, so a typo in the last one imports nothing
  // of the first ones: the command can be run again as it is, once fixed.
  const bool folders = options.format == ImportFormat::kGeak || options.format == ImportFormat::kAigV01 ||
                       options.format == ImportFormat::kKernelBench;
  const std::string from = "--from " + std::string(NameOf(kFormats, options.format));
  for (const std::string& path : paths) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (!std::filesystem::exists(status)) return Error{path + ": no such file or folder"};
    if (folders && !std::filesystem::is_directory(status))
      return Error{path + ": not a folder (" + from + " reads a folder)"};
    if (!folders && std::filesystem::is_directory(status))
      return Error{path + ": a folder (" + from + " reads a file; give the files in it)"};
  }
  ImportSink sink(vault, options);
  for (const std::string& path : paths) {
    const size_t rows_before = sink.report().rows();
    if (Status s = ImportOne(path, sink); !s) return Error{s.error()};
    // A path of another format (or an empty one) reads as no rows at all: said, not silent.
    if (sink.report().rows() == rows_before) sink.report().empty_paths.push_back(path);
  }
  if (Status s = sink.Flush(); !s) return Error{s.error()};
  return std::move(sink.report());
}

Status ImportSink::Add(KernelRecord record, const std::string& file, int64_t line) {
  return Queue(std::move(record), file, line, true);
}

Status ImportSink::AddKeepingOrigin(KernelRecord record, const std::string& file, int64_t line) {
  return Queue(std::move(record), file, line, false);
}

Status ImportSink::Queue(KernelRecord record, const std::string& file, int64_t line, bool stamp_origin) {
  if (record.kind == kKindKernel && record.task.name.empty()) {
    Malformed(file, line, "no task name");
    return Status::Ok();
  }
  if (record.kind == kKindKernel && record.candidate_source.empty()) {
    Malformed(file, line, "no candidate source");
    return Status::Ok();
  }
  if (record.kind == kKindQa && record.qa.question.empty()) {
    Malformed(file, line, "a qa record without a question");
    return Status::Ok();
  }
  if (!options_.source.empty()) record.provenance.source = options_.source;
  if (!options_.license.empty()) record.provenance.license = options_.license;
  if (stamp_origin) {
    record.provenance.origin_file = file;
    record.provenance.origin_line = line;
  }
  FinishRecord(record);
  if (record.provenance.parent_id == record.id) {
    Malformed(file, line, "provenance.parent_id: names the record itself");
    return Status::Ok();
  }
  // Whatever a row says of its results, they are claims until the engine verifies it.
  for (VerificationResult& v : record.results) {
    v.origin = kOriginImport;
    if (v.claim.empty()) v.claim = file + ":" + std::to_string(line);
  }
  batch_.push_back(std::move(record));
  ++report_.imported;
  return batch_.size() >= kBatch ? Flush() : Status::Ok();
}

void ImportSink::Malformed(const std::string& file, int64_t line, std::string why) {
  report_.malformed.push_back({file, line, std::move(why)});
}

void ImportSink::Skip(const std::string& file, int64_t line, std::string why) {
  report_.skipped.push_back({file, line, std::move(why)});
}

Status ImportSink::Flush() {
  if (batch_.empty()) return Status::Ok();
  Status s = vault_.UpsertMany(batch_);
  batch_.clear();
  return s;
}

SourceKind DetectSourceKind(const std::string& source, const std::string& language_hint) {
  const char* probe = ProbeName(source, language_hint);
  auto candidate = CandidateFromSource(probe, source);
  if (candidate) return {candidate->language, std::string(ToString(candidate->format))};
  std::string language = language_hint;
  if (language.empty()) {
    const std::string_view p = probe;
    language = p.ends_with(".py") ? "python" : p.ends_with(".hip") ? "hip" : p.ends_with(".cu") ? "cuda" : "cpp";
  }
  return {language, "source"};
}

std::string FencedBlock(std::string_view text, const std::vector<std::string>& tags) {
  size_t pos = 0;
  while ((pos = text.find("```", pos)) != std::string_view::npos) {
    const size_t tag_end = text.find('\n', pos);
    if (tag_end == std::string_view::npos) return "";
    std::string tag(Trim(text.substr(pos + 3, tag_end - pos - 3)));
    for (char& c : tag) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const size_t close = text.find("```", tag_end + 1);
    if (close == std::string_view::npos) return "";
    const bool wanted = tags.empty() || std::find(tags.begin(), tags.end(), tag) != tags.end();
    if (wanted) return std::string(text.substr(tag_end + 1, close - tag_end - 1));
    pos = close + 3;
  }
  return "";
}

std::string TextField(const Json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Status ForEachJsonLine(const std::string& path, ImportSink& sink,
                       const std::function<Status(const Json&, int64_t)>& row) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open"};
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    if (Trim(line).empty()) continue;
    auto json = ParseJson(line);
    if (!json) {
      sink.Malformed(path, n, "not JSON: " + json.error());
      continue;
    }
    if (!json->is_object()) {
      sink.Malformed(path, n, "not a JSON object");
      continue;
    }
    if (Status s = row(*json, n); !s) return s;
  }
  if (in.bad()) return Error{path + ": read failed"};
  return Status::Ok();
}

Status ImportRecordsFile(const std::string& path, ImportSink& sink) {
  return ForEachJsonLine(path, sink, [&](const Json& row, int64_t line) -> Status {
    auto record = RecordFromJson(row);
    if (!record) {
      sink.Malformed(path, line, record.error());
      return Status::Ok();
    }
    // The record's own origin is kept: it says where the kernel first came from.
    return sink.AddKeepingOrigin(std::move(*record), path, line);
  });
}

}  // namespace kvault::corpus
