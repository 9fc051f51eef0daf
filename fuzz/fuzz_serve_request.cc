// Fuzzes what `kvault serve` does with a request body from the network
// (serve/request.h): bounded JSON parsing (util/json_parse.h, as the HTTP server reads
// a body), then every protocol's parser on it (the native request and batch, AMD's HIP
// sandbox request and batch, the Triton /evaluate request with and without a suite),
// the task text and file extension of each accepted request, and the answers built
// for it from an outcome read leniently out of the same JSON (its "outcome" object, so
// the answers see arbitrary statuses, speedups and cases). Nothing may throw or crash;
// an accepted request keeps every documented bound.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "serve/request.h"
#include "util/json_parse.h"

namespace {

using kvault::Json;
using namespace kvault::serve;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

const TritonSuite& Suite() {
  static const TritonSuite* suite = [] {
    auto* s = new TritonSuite;
    s->format = kvault::GeakFormat::kTritonBenchG;
    s->files.emplace_back("add.py", kvault::GeakParts{"def add(x, y):\n    return x + y\n",
                                                      "result_gold = add(1, 2)\n"});
    s->files.emplace_back("row_max.py", kvault::GeakParts{"def row_max(x):\n    return x.max(1)\n",
                                                          "def test_row_max():\n    return 1\n"});
    return s;
  }();
  return *suite;
}

// An outcome from whatever the JSON holds under "outcome"; wrong types count as absent.
ServeOutcome OutcomeFrom(const Json& body) {
  ServeOutcome o;
  if (!body.is_object()) return o;
  auto it = body.find("outcome");
  if (it == body.end() || !it->is_object()) return o;
  const Json& j = *it;
  auto str = [&](const char* k) {
    auto f = j.find(k);
    return f != j.end() && f->is_string() ? f->get<std::string>() : std::string();
  };
  auto flag = [&](const char* k) {
    auto f = j.find(k);
    return f != j.end() && f->is_boolean() && f->get<bool>();
  };
  auto num = [&](const char* k) -> std::optional<double> {
    auto f = j.find(k);
    if (f == j.end() || !f->is_number()) return std::nullopt;
    return f->get<double>();
  };
  o.status = str("status");
  o.compiled = flag("compiled");
  o.correct = flag("correct");
  o.speedup = num("speedup");
  o.reference_ms = num("reference_ms");
  o.candidate_ms = num("candidate_ms");
  o.speedup_implausible = flag("speedup_implausible");
  o.message = str("message");
  o.diagnostics = str("diagnostics");
  o.error_kind = ErrorKindFromString(str("error_kind"));
  if (auto f = j.find("cases"); f != j.end()) o.cases = *f;
  if (auto f = j.find("phases"); f != j.end()) o.phases = *f;
  return o;
}

// `made`: the task and candidate were made by the server (Triton), not sent as they are.
void CheckAccepted(const ServeRequest& r, bool made) {
  Check(!r.task_source.empty());
  if (!made) Check(r.task_source.size() <= kMaxSourceBytes && r.code.size() <= kMaxSourceBytes);
  Check(r.completion.size() <= kMaxCompletionBytes);
  Check(r.idempotency_key.size() <= kMaxKeyBytes && r.run.size() <= kMaxKeyBytes);
  Check(!r.task_name.empty());
  Check(r.previous_rewards.size() <= kMaxPreviousTurns);
  for (double x : r.previous_rewards) Check(std::isfinite(x));
  Check(r.discount >= 0 && r.discount <= 1);
  if (r.deadline_s) Check(*r.deadline_s >= 0.001 && std::isfinite(*r.deadline_s));
  for (const auto& tol : {r.atol, r.rtol})
    if (tol) Check(*tol >= 0 && std::isfinite(*tol));
  Check(r.language.empty() || r.language == "hip" || r.language == "cuda" || r.language == "cpp" ||
        r.language == "python" || r.language == "triton");
  Check(r.policy == "task" || r.policy == "any" || r.policy == "custom_kernel");
}

void Answer(const ServeRequest& r, const ServeOutcome& o, bool made = false) {
  CheckAccepted(r, made);
  const std::string task = EffectiveTaskSource(r);
  Check(task.size() >= r.task_source.size());
  const std::string ext = CandidateExtension(r.language, r.code);
  Check(ext == ".py" || ext == ".hip" || ext == ".cu" || ext == ".cpp");
  const Json result = ResultJson(r, o, "c-0");
  Check(result["reward"].is_null() == o.error_kind.has_value());
  Check(result.contains("error") == o.error_kind.has_value());
  (void)kvault::DumpJson(result);
  (void)kvault::DumpJson(HipResponseJson(r, o, r.task_name));
  (void)kvault::DumpJson(TritonResponseJson(o));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto body = kvault::ParseJson(text);  // the HTTP server's ReadBody
  if (!body) return 0;
  const ServeOutcome outcome = OutcomeFrom(*body);
  RequestDefaults defaults;
  if (auto r = ParseVerifyRequest(*body, defaults)) {
    Check(r->code.empty() || r->completion.empty());
    Answer(*r, outcome);
  }
  if (auto batch = ParseBatchRequest(*body, defaults)) {
    Check(!batch->empty() && batch->size() <= kMaxBatch);
    for (const ServeRequest& r : *batch) Answer(r, outcome);
  }
  if (auto r = ParseHipRequest(*body, defaults)) {
    Check(r->language == "hip");
    Answer(*r, outcome);
  }
  if (auto batch = ParseHipBatch(*body, defaults)) {
    Check(!batch->empty() && batch->size() <= kMaxBatch);
    for (const ServeRequest& r : *batch) Answer(r, outcome);
  }
  Check(!ParseTritonRequest(*body, nullptr, defaults));
  if (auto r = ParseTritonRequest(*body, &Suite(), defaults)) {
    Check(r->language == "triton" && !r->code.empty());
    Answer(*r, outcome, /*made=*/true);
  }
  // The answers also for an outcome alone (a request with every default).
  ServeRequest plain;
  plain.task_source = "x";
  plain.task_name = "t";
  plain.policy = defaults.policy;
  plain.run = defaults.run;
  Answer(plain, outcome);
  return 0;
}
