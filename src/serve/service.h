#pragma once
// VerificationService: the engine of `kvault serve` without HTTP (docs/serve.md).
// The engine's lane pool (engine/lane_pool.h: lanes spread over the host's devices,
// the compile pool that builds compiled candidates ahead on every CPU core, the reuse
// rule, the recording) behind one bounded queue, a thread per lane taking its jobs.
//
//   auto service = VerificationService::Start(settings, store);
//   auto jobs = (*service)->Submit(requests);     // Error kOverloaded / kUnavailable
//   ServeOutcome o = (*service)->Wait(*jobs[0], deadline).value();
//
// A job is one candidate against one task, identified by its content (run, task hash,
// candidate hash, the candidate's language, backend, policy, sample): identical requests
// share one job while it is known here, and the store answers one verified earlier (also by
// an earlier server process or `kvault eval`/`gen` of the same run; the lane pool's
// reuse rule, never a row `kvault import` brought in). A task is named
// `<label>-<first 12 hex digits of its hash>` (ServeTaskName): requests bring the
// task's source, not a suite's name; a task of the server's own Triton suite keeps its
// name (RecordedTaskName). A request the
// server cannot run as its client declared it (a `language`, or a protocol's field
// such as hip_code, that its backend cannot build or run) is refused whole (Refusal
// kUnsupported), never answered with a reward of 0; an answer whose code turns out to
// be in such a language, where nothing was declared, is its own compile_error
// (ServeOutcome::foreign_language), never a refusal of its batch. An infrastructure
// failure ends a job with error_kind "infrastructure" and no reward; it is never
// answered again, a resubmission verifies anew.
// Thread-safe: Submit, Wait, Cancel, Health and Metrics may be called from any thread.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "candidate/candidate.h"
#include "engine/lane_pool.h"
#include "engine/options.h"
#include "serve/metrics.h"
#include "serve/request.h"
#include "store/store.h"
#include "task/task_file.h"

namespace kvault::serve {

using Clock = std::chrono::steady_clock;

struct ServiceSettings {
  EngineOptions options;       // device_index is set per lane
  std::vector<int> devices{0};
  int lanes_per_device = 1;
  size_t queue_capacity = 4096;
  int compile_jobs = -1;       // threads of the compile pool; -1: one per CPU core; 0: none
  std::string work_dir;        // tasks/ and candidates/ the workers read
  // How long a finished job stays known in memory (the store answers after that).
  std::chrono::seconds keep_finished{600};
};

// `<label>-<first 12 hex digits of task_hash>`: the name of a task a request brought
// (the label made safe for a file name); score::NameServeTasks reads it back.
std::string ServeTaskName(const std::string& label, const std::string& task_hash);

// The task name a request's attempts are recorded under: a task of the server's suite
// (ServeRequest::suite_task) by its own name, as `kvault eval` of that suite names it,
// unless the request's tolerances changed its bytes; any other by ServeTaskName.
std::string RecordedTaskName(const ServeRequest& r, const std::string& task_hash);

// One candidate's verification, shared by every request that asked for it.
struct Job {
  enum class State { kQueued, kRunning, kDone };
  std::string id;           // "c-" + 24 hex digits of the content key
  std::string key;          // the content key
  std::string run;          // the store's run name
  std::string policy;       // task | any | custom_kernel, as the request asked
  std::string language;     // how the candidate is saved (its extension's language)
  std::string sample;       // ServeRequest::sample, recorded with its attempt
  std::string unsupported;  // why this server cannot run what the request declared; "" when it can
  TaskFile task;
  std::optional<Candidate> candidate;  // nullopt: ended before it was loaded
  std::optional<Clock::time_point> deadline;  // the latest of its requests'; none: no deadline
  int owners = 0;           // requests waiting for it (Cancel drops it at 0)
  // Guarded by the service's mutex:
  State state = State::kQueued;
  bool staged = false;      // its files written and its build queued: a lane may take it
  ServeOutcome outcome;
  Clock::time_point finished_at{};
};

class VerificationService {
 public:
  enum class Refusal { kOverloaded, kUnavailable, kConflict, kStopping, kUnsupported };
  struct SubmitError {
    Refusal why;
    std::string message;
    int retry_after_s = 0;
  };
  // The job of each request; shared[i]: request i joined a job that an earlier
  // request made (it is answered with from_store true, it verified nothing itself).
  struct Submitted {
    std::vector<std::shared_ptr<Job>> jobs;
    std::vector<bool> shared;
  };
  using SubmitResult = std::variant<Submitted, SubmitError>;

  // Starts the lanes (each warms its workers) and the compile pool.
  static Result<std::unique_ptr<VerificationService>> Start(ServiceSettings settings, Store& store);
  ~VerificationService();  // Stop(), then joins the lanes
  VerificationService(const VerificationService&) = delete;
  VerificationService& operator=(const VerificationService&) = delete;

  // Queues every request or none (a batch never half-enters the queue).
  SubmitResult Submit(const std::vector<ServeRequest>& requests);
  // The job's outcome once it ended; nullopt when `until` came first.
  std::optional<ServeOutcome> Wait(const Job& job, std::optional<Clock::time_point> until);
  // A counter that moves whenever any job ends; WaitForChange blocks until it differs
  // from `seen` or `until` comes.
  uint64_t Generation() const;
  uint64_t WaitForChange(uint64_t seen, Clock::time_point until);
  // Snapshot of one job (its state and outcome), under the service's lock.
  std::pair<Job::State, ServeOutcome> Peek(const Job& job) const;
  // Drops each job still queued that no other request waits for; returns how many.
  size_t Cancel(const std::vector<std::shared_ptr<Job>>& jobs);
  // Stops taking jobs: queued ones end as infrastructure ("server stopping"), running
  // ones finish and are recorded.
  void Stop();
  // Stop(), and every verification that ends from now on is dropped: it ends as
  // infrastructure ("submit it again") and is not recorded. For a caller about to kill
  // the running ones' workers and builds (ChildProcess::KillAllGroups), whose deaths
  // are no verdict on the candidates.
  void Abort();
  // Waits until every lane has ended. REQUIRES: Stop() or Abort() was called.
  void Join();

  bool Available() const;  // at least one lane can verify
  Json Health() const;
  std::string MetricsText() const;
  Metrics& metrics() { return metrics_; }

 private:
  struct Lane;
  VerificationService(ServiceSettings settings, Store& store);
  void RunLane(Lane& lane);
  std::shared_ptr<Job> NextJob(Lane& lane);  // blocks; nullptr when stopping
  void Verify(Lane& lane, Job& job);
  void Finish(Job& job, ServeOutcome outcome);
  // Counts an answer in a language this backend cannot build (its foreign_language),
  // and warns on stderr at most once a minute.
  void NoteForeignLanguage(const ServeOutcome& o);
  // The job of `r` (a known one, one the store answers, or a new one to queue).
  std::shared_ptr<Job> Prepare(const ServeRequest& r);
  std::optional<ServeOutcome> FromStore(const Job& job);
  void ForgetOldJobs();  // REQUIRES: mu_ held

  ServiceSettings settings_;
  Metrics metrics_;
  // Before lanes_ and threads_: they point into it; the threads are joined first.
  std::unique_ptr<LanePool> pool_;

  mutable std::mutex mu_;
  std::condition_variable work_, changed_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::map<std::string, std::shared_ptr<Job>> jobs_;     // by content key
  std::map<std::string, std::string> idempotency_;       // key -> content key
  uint64_t generation_ = 0;
  bool stopping_ = false;
  std::optional<Clock::time_point> foreign_warned_;  // NoteForeignLanguage's last warning
  std::atomic<bool> aborting_{false};  // Abort()
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::vector<std::thread> threads_;
};

}  // namespace kvault::serve
