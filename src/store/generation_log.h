#pragma once
// The generation log: every LLM call of `kvault gen` and the state of each task's
// generation, in the same SQLite file as the attempts (docs/store.md, docs/agent.md).
//
//   auto log = GenerationLog::Open(store_path);   // migrates like Store::Open
//   GenerationRecord g;  g.run = "r";  g.task = "relu";  g.role = "generator";  ...
//   if (Status s = (*log)->Put(g); !s) ...
//   auto recorded = (*log)->Find("r", "relu", 1, 0, "generator");   // for --resume
//
// Thread safety: every method may be called from any thread (one connection, one
// mutex). Errors as for Store: an Error naming the path, never a throw.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "util/json.h"
#include "util/result.h"

namespace kvault {

// One LLM call. Key: (run, task, iteration, offspring, role).
struct GenerationRecord {
  int64_t id = 0;  // set by Put
  std::string run, task;
  int iteration = 1;       // 1-based
  int offspring = 0;       // 0-based
  std::string role;        // "generator" | "reflector"
  std::string parent;      // the candidate this call built on ("iter1_0"), "" for none
  std::string model_requested, model_returned;
  std::string prompt_version;
  Json prompt = Json::array();  // the messages sent: [{role, content}]
  std::string response;         // the assistant text ("" when the call failed)
  Json usage = Json::object();  // {prompt_tokens, completion_tokens, finish_reason}
  double latency_s = 0;
  int http_attempts = 0;
  std::string error;       // why the call failed ("" when it succeeded)
  // What the call led to: an outcome status of the candidate it produced,
  // "no_code" (the answer held no usable candidate), "call_failed", or "reflection".
  std::string outcome;
  std::string candidate_path;       // "" when no candidate was written
  std::optional<int64_t> attempt_id;  // the attempts row of that candidate
  std::string created_at;           // set by Put
};

// The state of one task in one generation run.
struct GenTaskRecord {
  std::string run, task;
  bool finished = false;   // every iteration ran; --resume skips it
  bool solved = false;     // some candidate passed
  int candidates = 0;      // candidates verified
  std::optional<int64_t> best_attempt_id;
  std::string best_path;
  std::optional<double> best_speedup;
  Json settings = Json::object();  // mode, lang, model, budget, prompt version
  std::string updated_at;  // set by PutTask
};

class GenerationLog {
 public:
  // Opens (creating or migrating the schema, like Store::Open) the store at `path`.
  static Result<std::unique_ptr<GenerationLog>> Open(const std::string& path);
  ~GenerationLog();

  // Inserts, or replaces the row with the same key. Sets id and created_at.
  Status Put(GenerationRecord& record);
  Result<std::optional<GenerationRecord>> Find(const std::string& run, const std::string& task,
                                               int iteration, int offspring,
                                               const std::string& role);
  // Every call of (run, task), by iteration, offspring, then role.
  Result<std::vector<GenerationRecord>> ListTask(const std::string& run, const std::string& task);
  Result<std::vector<GenerationRecord>> ListRun(const std::string& run);

  Status PutTask(GenTaskRecord& record);
  Result<std::optional<GenTaskRecord>> FindTask(const std::string& run, const std::string& task);
  Result<std::vector<GenTaskRecord>> ListTasks(const std::string& run);

  const std::string& path() const { return path_; }

 private:
  struct Impl;
  GenerationLog(std::string path, std::unique_ptr<Impl> impl);
  Error Fail(const std::string& what, const std::string& detail) const;

  const std::string path_;
  std::mutex mu_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvault
