#pragma once
// The OptimAgent-v2 loop for one task (docs/agent.md, "The loop").
//
//   LoopResult r = RunLoop(task, prompts, pipeline, settings, seams, &stop_flag);
//
// Per iteration, `offsprings` generator calls; each answer becomes a candidate file
// that the Evaluator verifies (the engine's cascade); then one reflector call per
// candidate (how to fix it, or how to make it faster). From iteration 2 on the
// generator sees the best `ancestors` correct candidates so far, sorted by speedup
// (the list is rebuilt from every candidate; nothing is overwritten), and the last
// iteration's candidates with their feedback and reflections. Every call is handed
// to the CallLog before the next starts; a call the CallLog already holds (an
// interrupted run being resumed) is taken from it instead of being made again. A
// call that fails (after the client's retries) stops the loop: the service failed,
// and nothing about the task or its candidates is learned from it.
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "agent/feedback.h"
#include "agent/prompt_library.h"
#include "llm/chat.h"
#include "store/generation_log.h"
#include "store/store.h"
#include "task/task_file.h"

namespace kvault::agent {

struct LoopSettings {
  int offsprings = 1;     // num_offsprings; Default: 1 (the paper's)
  int iterations = 3;     // max_iteration; Default: 3 (the paper's)
  int ancestors = 3;      // ancestor_num; Default: 3
  // Iterations still run once a candidate is correct (max_perf_debug_num);
  // Default: -1, no limit besides `iterations`.
  int max_perf_debug = -1;
  std::string model;
  std::optional<double> temperature;
  std::optional<int> max_tokens;
  FeedbackLimits limits;
  size_t max_code_in_prompt = 12000;  // characters of one candidate shown in a prompt
};

// Verifies one candidate file of `task`. Thread-safe. An Error means the
// infrastructure failed (the store cannot be written) and the whole run stops.
class Evaluator {
 public:
  virtual ~Evaluator() = default;
  virtual Result<AttemptRecord> Evaluate(const TaskFile& task, const std::string& path) = 0;
};

// Where calls are recorded, and recorded calls found again (--resume).
class CallLog {
 public:
  virtual ~CallLog() = default;
  // The call recorded earlier under this key, or nullopt. A recorded failed call is
  // not an answer: the CallLog returns nullopt for it, so it is made again.
  virtual std::optional<GenerationRecord> Recorded(int iteration, int offspring,
                                                   const std::string& role) = 0;
  virtual Status Record(GenerationRecord& record) = 0;
};

// What a mode does with a model's answer.
class Pipeline {
 public:
  virtual ~Pipeline() = default;
  virtual std::string mode() const = 0;
  // The baseline shown to the model ("" when the mode has none).
  virtual std::string baseline() const { return ""; }
  // The candidate file's text from the extracted code; Error (for the model) when
  // the code cannot become a candidate.
  virtual Result<std::string> CandidateSource(const std::string& code) const = 0;
};

// Takes the code out of an answer (llm::ExtractCode in production).
using Extractor = std::function<Result<std::string>(std::string_view answer)>;

struct Offspring;

struct LoopSeams {
  llm::ChatClient* client = nullptr;
  Extractor extract;
  Evaluator* evaluator = nullptr;
  CallLog* log = nullptr;
  std::string candidate_dir;  // where iter<i>_<k><ext> files are written
  // Called once per candidate when its iteration step ends (verified and reflected
  // on, or no code); optional.
  std::function<void(const Offspring&)> on_offspring;
};

// One candidate of the loop.
struct Offspring {
  std::string label;  // "iter<i>_<k>"
  int iteration = 1, index = 0;
  std::string parent;
  bool answered = false;                 // the generator call returned an answer
  std::string code;                      // "" when the answer gave none
  std::optional<AttemptRecord> attempt;  // set when verified
  std::string feedback, reflection;
  bool correct() const { return attempt && attempt->correct; }
};

struct LoopResult {
  std::vector<Offspring> offsprings;  // every candidate, in order
  std::optional<size_t> best;         // index of the fastest correct one
  int calls = 0;                      // calls made now (not taken from the log)
  bool stopped = false;               // *stop was set before the loop ended
  std::string infra_error;            // non-empty: an Evaluator or CallLog error ended it
  // Non-empty: an LLM call failed after the client's retries, or a candidate's
  // verification ended in infra_error (call_infra) — the service's or the machine's
  // fault, not the task's; the loop stopped there, unfinished, so a resumed run calls
  // or verifies again.
  std::string call_error;
  bool call_infra = false;
};

LoopResult RunLoop(const TaskFile& task, const PromptSet& prompts, const Pipeline& pipeline,
                   const LoopSettings& settings, const LoopSeams& seams,
                   const std::atomic<bool>* stop);

// The best `n` correct candidates, fastest first (no speedup counts as slowest;
// ties keep the earlier candidate first). Indexes into `all`.
std::vector<size_t> BestCorrect(const std::vector<Offspring>& all, size_t n);

}  // namespace kvault::agent
