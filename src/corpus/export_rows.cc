// The row of each export format (docs/corpus.md, "Export formats").
#include <cmath>

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

Json ResultsJson(const KernelRecord& r) {
  Json out = Json::array();
  for (const VerificationResult& v : r.results) out.push_back(ResultToJson(v));
  return out;
}

// What every format's metadata carries beside AMD's fields, so an import of the
// export gets the same record back.
void AddVaultFields(Json& o, const KernelRecord& r) {
  o["record_id"] = r.id;
  o["language"] = r.language;
  o["format"] = r.format;
  o["arch"] = r.arch;
  o["pipeline"] = r.provenance.pipeline;
  o["model"] = r.provenance.model;
  o["parent_id"] = r.provenance.parent_id;
  o["source"] = r.provenance.source;
  o["license"] = r.provenance.license;
}

}  // namespace

std::string TaskPrompt(const KernelRecord& r) {
  if (r.kind == kKindQa) return r.qa.question;
  std::string lang = r.language.empty() ? "GPU" : r.language;
  return "Write a " + lang + " kernel (" + (r.format.empty() ? std::string("extension") : r.format) +
         " format) that computes the same outputs as the PyTorch module below, faster.\n\n```python\n" +
         r.task.reference_source + (r.task.reference_source.ends_with('\n') ? "" : "\n") + "```\n";
}

std::string AnswerText(const KernelRecord& r) {
  if (r.kind == kKindQa) return r.qa.answer;
  return "```" + FenceTag(r) + "\n" + r.candidate_source + (r.candidate_source.ends_with('\n') ? "" : "\n") +
         "```";
}

const VerificationResult* ChosenResult(const KernelRecord& r, const RecordFilter& filter) {
  if (filter.hardware.empty()) return BestResult(r);
  KernelRecord on_hardware;
  for (const VerificationResult& v : r.results)
    if (v.hardware == filter.hardware) on_hardware.results.push_back(v);
  const VerificationResult* best = BestResult(on_hardware);
  if (!best) return nullptr;
  for (const VerificationResult& v : r.results)  // the same result, in `r`
    if (v.hardware == best->hardware && v.toolchain == best->toolchain && v.backend == best->backend) return &v;
  return nullptr;
}

Json SftRow(const KernelRecord& r, const RecordFilter& filter) {
  const VerificationResult* best = ChosenResult(r, filter);
  Json meta = {{"kernel_name", r.task.name},
               {"speedup", best ? Number(best->speedup) : Json(nullptr)},
               {"pass_exe", best && IsPassed(*best)},
               {"pass_perf", best && IsPassed(*best) && best->speedup && *best->speedup > 1},
               {"hardware", best ? best->hardware : ""},
               {"results", ResultsJson(r)}};
  AddVaultFields(meta, r);
  return {{"messages", Json::array({{{"role", "user"}, {"content", TaskPrompt(r)}},
                                    {{"role", "assistant"}, {"content", AnswerText(r)}}})},
          {"metadata", meta}};
}

Json AlpacaRow(const KernelRecord& r) {
  return {{"instruction", TaskPrompt(r)}, {"input", ""}, {"output", AnswerText(r)}};
}

Json ShareGptRow(const KernelRecord& r) {
  return {{"conversations", Json::array({{{"from", "human"}, {"value", TaskPrompt(r)}},
                                         {{"from", "gpt"}, {"value", AnswerText(r)}}})}};
}

std::optional<Json> VerlRow(const KernelRecord& r, const RecordFilter& filter, int64_t index) {
  if (r.kind != kKindKernel || r.task.reference_source.empty()) return std::nullopt;
  const VerificationResult* best = ChosenResult(r, filter);
  // records.py (python/kernelvault) reads these ground-truth fields as they are.
  Json truth = {{"pytorch_module_code", r.task.reference_source},
                {"kernel_name", r.task.name},
                {"hip_code", r.candidate_source},
                {"language", r.language}};
  Json extra = {{"index", index},
                {"speedup", best ? Number(best->speedup) : Json(nullptr)},
                {"status", best ? best->status : ""},
                {"results", DumpJson(ResultsJson(r))}};  // text: one column type for every row
  AddVaultFields(extra, r);
  return Json{{"prompt", Json::array({{{"role", "user"}, {"content", TaskPrompt(r)}}})},
              {"data_source", r.provenance.source.empty() ? "kernelvault" : r.provenance.source},
              {"ability", "kernel"},
              {"reward_model", {{"style", "rule"}, {"ground_truth", truth}}},
              {"extra_info", extra}};
}

Json HfRow(const KernelRecord& r, const RecordFilter& filter) {
  const VerificationResult* best = ChosenResult(r, filter);
  Json row = RecordToJson(r);
  Json flat = {{"id", r.id},
               {"kind", r.kind},
               {"task_name", r.task.name},
               {"reference_source", r.task.reference_source},
               {"reference_sha256", r.task.reference_sha256},
               {"candidate_source", r.candidate_source},
               {"question", r.qa.question},
               {"answer", r.qa.answer},
               {"citation", r.qa.citation},
               {"prompt", TaskPrompt(r)},
               {"status", best ? best->status : "unverified"},
               {"speedup", best ? Number(best->speedup) : Json(nullptr)},
               {"hardware", best ? best->hardware : ""},
               // Nested parts as JSON text: every row has the same column types.
               {"provenance", DumpJson(row["provenance"])},
               {"results", DumpJson(row["results"])},
               {"contamination", DumpJson(row["contamination"])},
               {"duplicate_of", r.duplicate_of},
               {"duplicate_kind", r.duplicate_kind}};
  AddVaultFields(flat, r);
  flat.erase("record_id");  // "id" already
  return flat;
}

}  // namespace kvault::corpus
