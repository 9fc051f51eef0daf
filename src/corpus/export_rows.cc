// The row of each export format (docs/corpus.md, "Export formats").
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string_view>
#include <filesystem>

#include "corpus/export.h"

namespace kvault::corpus {
namespace {

Json Number(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? Json(*v) : Json(nullptr);
}

std::string FenceTag(const KernelRecord& r) {
  if (r.language == "triton" || r.language == "python") return "python";
  return r.language.empty() ? "cpp" : r.language;
}

Json ResultsJson(const KernelRecord& r, bool publish) {
  Json out = Json::array();
  for (const VerificationResult& v : r.results) out.push_back(ExportedResult(v, publish));
  return out;
}

// What every format's metadata carries beside AMD's fields, so an import of the
// export gets the same record back.
void AddVaultFields(Json& o, const KernelRecord& r, bool publish) {
  o["record_id"] = r.id;
  o["language"] = r.language;
  o["format"] = r.format;
  o["arch"] = r.arch;
  o["pipeline"] = r.provenance.pipeline;
  o["model"] = publish ? PublicModel(r.provenance.model) : r.provenance.model;
  o["parent_id"] = r.provenance.parent_id;
  o["source"] = publish ? PublicName(r.provenance.source) : r.provenance.source;
  o["license"] = r.provenance.license;
  o["reference_sha256"] = r.task.reference_sha256;
}

// The record's speed as rows state it: the median over its counted passed results.
void AddSpeed(Json& o, const KernelRecord& r, const RecordFilter& filter) {
  SpeedStat speed = RecordSpeed(r, filter.hardware, filter.count_claims);
  o["speedup"] = Number(speed.median);
  o["speedup_statistic"] = "median";
  o["speedup_samples"] = speed.samples;
}

}  // namespace

std::string PublicName(const std::string& text) {
  if (text.find('/') == std::string::npos || text.find("://") != std::string::npos) return text;
  return std::filesystem::path(text).filename().string();
}

std::string PublicText(const std::string& text) {
  auto path_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '+' ||
           c == '@' || c == '~' || c == '/';
  };
  std::string out;
  size_t k = 0;
  while (k < text.size()) {
    const bool home = text.compare(k, 2, "~/") == 0;
    const bool starts = (text[k] == '/' || home) && (k == 0 || std::string_view(" \t\n\"'(=:[<,`").find(text[k - 1]) !=
                                                                    std::string_view::npos);
    size_t end = k;
    while (starts && end < text.size() && path_char(text[end])) ++end;
    const std::string_view path(text.data() + k, end - k);
    // Two parts at least (`/usr/include`, not a lone `/` or `/ 2`), and no URL's `//`.
    const size_t last = path.find_last_of('/');
    if (!starts || path.starts_with("//") || last == std::string_view::npos || last + 1 == path.size() ||
        path.find('/', home ? 2 : 1) == std::string_view::npos) {
      out += text[k++];
      continue;
    }
    out += path.substr(last + 1);
    k = end;
  }
  return out;
}

std::string PublicModel(const std::string& model) {
  const bool local = model.starts_with('/') || model.starts_with('~') || model.starts_with('.') ||
                     model.find('\\') != std::string::npos || std::count(model.begin(), model.end(), '/') > 1;
  if (!local || model.find("://") != std::string::npos) return model;
  std::string trimmed = model;
  while (trimmed.size() > 1 && (trimmed.back() == '/' || trimmed.back() == '\\')) trimmed.pop_back();
  const size_t cut = trimmed.find_last_of("/\\");
  return cut == std::string::npos ? trimmed : trimmed.substr(cut + 1);
}

Json ExportedResult(const VerificationResult& v, bool publish) {
  Json j = ResultToJson(v);
  if (publish) {
    j.erase("environment");
    j.erase("claim");
  }
  return j;
}

std::string AnswerText(const KernelRecord& r) {
  if (r.kind == kKindQa) return r.qa.answer;
  return "```" + FenceTag(r) + "\n" + r.candidate_source + (r.candidate_source.ends_with('\n') ? "" : "\n") +
         "```";
}

const VerificationResult* ChosenResult(const KernelRecord& r, const RecordFilter& filter) {
  if (filter.hardware.empty()) return BestResult(r, filter.count_claims);
  KernelRecord on_hardware;
  for (const VerificationResult& v : r.results)
    if (v.hardware == filter.hardware) on_hardware.results.push_back(v);
  const VerificationResult* best = BestResult(on_hardware, filter.count_claims);
  if (!best) return nullptr;
  for (const VerificationResult& v : r.results)  // the same result, in `r`
    if (v.hardware == best->hardware && v.toolchain == best->toolchain && v.backend == best->backend &&
        v.origin == best->origin && v.claim == best->claim)
      return &v;
  return nullptr;
}

Json ChatMessages(const KernelRecord& r, const RowContext& c, bool answer) {
  Json messages = Json::array();
  if (!c.prompt.system.empty()) messages.push_back({{"role", "system"}, {"content", c.prompt.system}});
  messages.push_back({{"role", "user"}, {"content", c.prompt.user}});
  if (answer) messages.push_back({{"role", "assistant"}, {"content", AnswerText(r)}});
  return messages;
}

Json SftRow(const KernelRecord& r, const RowContext& c) {
  const VerificationResult* best = ChosenResult(r, c.filter);
  SpeedStat speed = RecordSpeed(r, c.filter.hardware, c.filter.count_claims);
  Json meta = {{"kernel_name", r.task.name},
               {"pass_exe", best && IsPassed(*best)},
               {"pass_perf", best && IsPassed(*best) && speed.median && *speed.median > 1},
               {"hardware", best ? best->hardware : ""},
               {"results", ResultsJson(r, c.publish)},
               {"prompt_version", c.prompt.version}};
  AddSpeed(meta, r, c.filter);
  AddVaultFields(meta, r, c.publish);
  return {{"messages", ChatMessages(r, c, true)}, {"metadata", meta}};
}

Json AlpacaRow(const KernelRecord& r, const RowContext& c) {
  return {{"instruction", c.prompt.user}, {"input", ""}, {"output", AnswerText(r)}, {"system", c.prompt.system}};
}

Json ShareGptRow(const KernelRecord& r, const RowContext& c) {
  return {{"conversations", Json::array({{{"from", "human"}, {"value", c.prompt.user}},
                                         {{"from", "gpt"}, {"value", AnswerText(r)}}})},
          {"system", c.prompt.system}};
}

std::optional<Json> VerlRow(const KernelRecord& r, const RowContext& c, int64_t index) {
  if (r.kind != kKindKernel || r.task.reference_source.empty()) return std::nullopt;
  const VerificationResult* best = ChosenResult(r, c.filter);
  // records.py (python/kernelvault) reads these ground-truth fields as they are.
  Json truth = {{"pytorch_module_code", r.task.reference_source},
                {"kernel_name", r.task.name},
                {"hip_code", r.candidate_source},
                {"language", r.language}};
  Json extra = {{"index", index},
                {"status", best ? best->status : ""},
                {"results", DumpJson(ResultsJson(r, c.publish))}};  // text: one column type for every row
  AddSpeed(extra, r, c.filter);
  AddVaultFields(extra, r, c.publish);
  return Json{{"prompt", ChatMessages(r, c, false)},
              {"data_source", r.provenance.source.empty() ? "kernelvault" : PublicName(r.provenance.source)},
              {"ability", "kernel"},
              {"reward_model", {{"style", "rule"}, {"ground_truth", truth}}},
              {"extra_info", extra}};
}

Json RecordRow(const KernelRecord& r, bool publish) {
  Json row = RecordToJson(r);
  if (!publish) return row;
  row["results"] = ResultsJson(r, true);
  row["provenance"]["origin_file"] = PublicName(r.provenance.origin_file);
  row["provenance"]["source"] = PublicName(r.provenance.source);
  row["provenance"]["model"] = PublicModel(r.provenance.model);
  row["provenance"]["prompt"] = PublicText(r.provenance.prompt);  // gen's feedback quotes the compiler
  return row;
}

Json HfRow(const KernelRecord& r, const RowContext& c) {
  const VerificationResult* best = ChosenResult(r, c.filter);
  SpeedStat speed = RecordSpeed(r, c.filter.hardware, c.filter.count_claims);
  Json row = RecordRow(r, c.publish);
  Json flat = {{"id", r.id},
               {"kind", r.kind},
               {"task_name", r.task.name},
               {"reference_source", r.task.reference_source},
               {"reference_sha256", r.task.reference_sha256},
               {"candidate_source", r.candidate_source},
               {"question", r.qa.question},
               {"answer", r.qa.answer},
               {"citation", r.qa.citation},
               {"system_prompt", c.prompt.system},
               {"prompt", c.prompt.user},
               {"status", best ? best->status : "unverified"},
               {"speedup", Number(speed.median)},
               {"speedup_samples", speed.samples},
               {"hardware", best ? best->hardware : ""},
               // Nested parts as JSON text: every row has the same column types.
               {"provenance", DumpJson(row["provenance"])},
               {"results", DumpJson(row["results"])},
               {"contamination", DumpJson(row["contamination"])},
               {"duplicate_of", r.duplicate_of},
               {"duplicate_kind", r.duplicate_kind}};
  AddVaultFields(flat, r, c.publish);
  flat.erase("record_id");  // "id" already
  return flat;
}

}  // namespace kvault::corpus
