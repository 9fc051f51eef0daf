#pragma once
// The reward service's requests and answers (docs/serve.md): the native API's JSON,
// AMD's HIP-sandbox and Triton-server protocols, turned into one `ServeRequest` and
// back. Pure functions of their arguments (no I/O, thread-safe); every field a client
// sends is checked here, so the service only sees well-formed work.
//
//   auto req = ParseVerifyRequest(body, defaults);      // Error: a 400 message
//   ...
//   Json answer = ResultJson(*req, outcome);
#include <optional>
#include <string>
#include <vector>

#include "geak/geak_import.h"
#include "reward/reward.h"
#include "serve/error_kind.h"
#include "util/json.h"
#include "util/result.h"

namespace kvault::serve {

// Limits on what one request may hold.
inline constexpr size_t kMaxSourceBytes = 1 << 20;       // a task or a candidate: 1 MiB
inline constexpr size_t kMaxCompletionBytes = 2 << 20;   // an LLM answer: 2 MiB
inline constexpr size_t kMaxBatch = 4096;                // candidates in one batch
inline constexpr size_t kMaxKeyBytes = 200;              // idempotency key, names
inline constexpr size_t kMaxPreviousTurns = 64;

// What a request leaves unsaid (the server's flags).
struct RequestDefaults {
  std::string run = "serve";
  RewardKind reward = RewardKind::kPaper;
  std::string policy = "custom_kernel";
};

// One candidate to verify, as every protocol asks for it.
struct ServeRequest {
  std::string task_source;      // the reference task file's text
  std::string task_name;        // a label ("task" when none was given)
  std::string code;             // the candidate's source; empty when `completion` is set
  std::string completion;       // an LLM answer the engine extracts the code from
  std::string language;         // hip | cuda | cpp | python | triton; "" = detect
  std::optional<double> atol, rtol;  // tolerances for this request (the task's own if unset)
  RewardKind reward = RewardKind::kPaper;
  std::vector<double> previous_rewards;  // earlier turns of the trajectory
  double discount = 0.6;
  std::string policy;           // task | any | fused | custom_kernel
  std::string run;
  std::string idempotency_key;  // "" = none: the content is the key
  // Which sample of the task this is (AttemptRecord::sample), as `kvault eval` names
  // its candidate files; "" = content alone identifies the attempt. Part of the job's
  // content: identical bytes under two samples are two jobs and two store rows.
  std::string sample;
  // task_name is the name of a task of the server's own suite (Triton's /evaluate),
  // recorded as it is rather than as a label (ServeTaskName).
  bool suite_task = false;
  std::optional<double> deadline_s;
};

// The native API's request object. Error: a message naming the field.
Result<ServeRequest> ParseVerifyRequest(const Json& body, const RequestDefaults& defaults);
// {"requests": [...]}: every request parsed; the first bad one is the error ("requests[3]: ...").
Result<std::vector<ServeRequest>> ParseBatchRequest(const Json& body, const RequestDefaults& defaults);

// One request object of AMD's HIP sandbox (`/run_code`, items of `/run_code_batch`).
Result<ServeRequest> ParseHipRequest(const Json& item, const RequestDefaults& defaults);
// `/run_code_batch`'s body.
Result<std::vector<ServeRequest>> ParseHipBatch(const Json& body, const RequestDefaults& defaults);

// The GEAK suite AMD's Triton server evaluates against: file name -> its parts.
struct TritonSuite {
  GeakFormat format = GeakFormat::kTritonBenchG;
  std::vector<std::pair<std::string, GeakParts>> files;  // sorted by name
  const GeakParts* Find(const std::string& filename) const;
};
// AMD's Triton `/evaluate` body against `suite` (nullptr: none configured).
Result<ServeRequest> ParseTritonRequest(const Json& body, const TritonSuite* suite,
                                        const RequestDefaults& defaults);

// The file extension a candidate is saved under (it decides its format with the
// content; docs/candidate-formats.md): from `language`, else from the source's own
// language (DetectSourceLanguage: comments and strings never count).
std::string CandidateExtension(const std::string& language, const std::string& code);

// The task's text as verified: the client's source, with its tolerances appended to
// KVAULT_META when the request sets them (docs/task-format.md).
std::string EffectiveTaskSource(const ServeRequest& r);

// What one verification ended with, as the service reports it.
struct ServeOutcome {
  std::string status;        // an OutcomeStatus name, or "" when it never ran (error)
  bool compiled = false, correct = false;
  std::optional<double> speedup, reference_ms, candidate_ms;
  bool speedup_implausible = false;
  std::string message, diagnostics, policy;
  // The engine's verdict written for the model's next turn: an <execution_result>
  // block and the details (agent/feedback.h); empty when there is no verdict.
  std::string feedback;
  std::string task, task_hash, candidate_hash;
  bool from_store = false;
  // The language of an answer whose content this backend cannot build, where the
  // request declared none ("cuda", "hip", "cpp"; its compile_error), else "".
  std::string foreign_language;
  double seconds = 0;
  Json phases = Json::object(), cases = Json::array();
  // Set when there is no reward: kInfrastructure, kTask, kDeadline or kCancelled.
  std::optional<ErrorKind> error_kind;
};

// The native API's result object (docs/serve.md, "The result of one candidate").
Json ResultJson(const ServeRequest& r, const ServeOutcome& o, const std::string& id);
// AMD HIP sandbox's response object for one request.
Json HipResponseJson(const ServeRequest& r, const ServeOutcome& o, const std::string& kernel_name);
// AMD Triton server's `/evaluate` answer.
Json TritonResponseJson(const ServeOutcome& o);

}  // namespace kvault::serve
