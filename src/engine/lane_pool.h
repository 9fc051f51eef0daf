#pragma once
// LanePool: the engine's verification lanes, behind every front end (`kvault eval`'s
// RunBatch, `kvault gen`'s LaneEvaluator, `kvault serve`'s VerificationService and,
// through serve, the cluster). It owns the lanes (a Verifier each, on one device
// each), the compile pool that builds candidates ahead of them, the one rule that
// decides whether a stored attempt answers a new one, and the recording of attempts.
//
//   LanePool pool(options, store, {.lanes_per_device = 4});
//   if (auto hello = pool.Start(pool.lane(0)); !hello) ...;      // no worker starts
//   pool.StartAheadBuilds(-1, known, LanePool::Ahead::kKnownOnly);
//   LaneAttempt a = pool.Attempt(pool.lane(i), {.run = "r1", .task = task,
//                                .candidate = LoadCandidate(path), .candidate_path = path,
//                                .sample = "relu_v2.cu"});
//
// The reuse rule (Reusable, FindReusable): a stored attempt answers a new one only
// when it is of the same content, keyed by run, task hash (the task's bytes, not its
// name), candidate hash and language (the same bytes saved as .hip and .cu are two
// candidates), sample, backend, arch and the policy the attempt applies (`task`
// resolved to the task's own), made under the same verdict settings (timing, the
// command line's tolerances); only rows an engine of this store verified (never a
// claim `kvault import` brought in); never task_error, infra_error or unsupported (not
// the candidate's outcome; unsupported is decided again); never under --compile-only;
// never with force.
//
// Thread safety: a Lane is used by one thread at a time (its owner, or whoever
// Acquired it); every other member may be called from any thread.
#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "candidate/candidate.h"
#include "engine/device_session.h"
#include "engine/options.h"
#include "engine/verification.h"
#include "store/store.h"
#include "task/task_file.h"

namespace kvault {

class CompilePool;
class InlinePrebuild;
class Verifier;

// The arch recorded with an attempt: the flag, else the device's own (from a hello
// answer or an environment fingerprint: both carry "device").
std::string RecordArch(const EngineOptions& options, const Json& with_device);

// Verifies a candidate as LoadCandidate returned it: one that could not be loaded
// is a parse_error with LoadCandidate's message, without starting anything.
Verification VerifyLoaded(Verifier& verifier, const TaskFile& task,
                          const Result<Candidate>& candidate);

// Adds to `v` the seconds an attempt spent before the verifier's clock started:
// `lane_start_s` (the lane's workers starting, on its first attempt) to
// `worker_start`, `lookup_s` (the store lookup, which under policy `task` describes
// the task in the lane's reference worker) to `describe`, and both to `seconds`.
void CountBeforeTheClock(Verification& v, double lane_start_s, double lookup_s);

// What of `options` decides a verdict beyond the task's and candidate's bytes: whether
// performance cases are timed, and tolerances that override the task's (--tolerance,
// --atol, --rtol): {"timing": bool, "rtol": number|null, "atol": number|null}.
// Recorded with every attempt as environment["verify"].
Json VerdictSettings(const EngineOptions& options);

// Turns a verification into the store's record. `candidate` is null when the file
// could not be loaded; its hash is then "unreadable:<path>".
AttemptRecord MakeRecord(const std::string& run, const TaskFile& task, const Candidate* candidate,
                         const std::string& candidate_path, const EngineOptions& options,
                         const Verification& v, const Json& environment);

// Whether a stored record may answer a new attempt of its content made under
// `settings` (VerdictSettings): verified by an engine of this store (origin ""), with
// the candidate's outcome (not task_error, infra_error, unsupported or an unknown
// status), under the same settings (a record without them was made under the defaults).
bool Reusable(const AttemptRecord& record, const Json& settings);

// The stored record of `key` (ContentKey: run, task hash, candidate hash, language,
// backend, arch, applied policy, sample) that Reusable accepts, else nullopt. A store
// that cannot be read answers nullopt: the attempt is verified again.
std::optional<AttemptRecord> FindReusable(Store& store, const ContentKey& key, const Json& settings);

// One attempt a lane is asked for.
struct AttemptSpec {
  std::string run{};
  const TaskFile& task;
  const Result<Candidate>& candidate;  // as LoadCandidate (or CandidateFromSource) returned it
  std::string candidate_path{};
  // Which sample of the task this is (AttemptRecord::sample); "" where content alone
  // identifies an attempt (serve).
  std::string sample{};
  std::string policy{};  // as asked: task | any | fused | custom_kernel; "" = the options'
  bool force = false;    // verify even when the store has a record
};

struct LaneAttempt {
  AttemptRecord record;
  bool from_store = false;  // taken from the store: nothing was verified
  // The verification made (unset when taken from the store).
  std::optional<Verification> verification;
  // keep() said no once the verification ended: nothing was recorded, `record` is
  // what would have been (its workers may have been killed under it).
  bool dropped = false;
  std::string store_error;  // the record could not be written ("" when it was)
};

class LanePool {
 public:
  struct Lane {
    int index = 0;
    int device = 0;  // EngineOptions::device_index of its verifier
    std::unique_ptr<Verifier> verifier;
    Json environment;              // the fingerprint, once Start answered (null before)
    std::atomic<bool> ready{false};  // Start answered
  };

  struct Settings {
    // One lane group per entry, each lane's device_index that entry. Default: one group
    // on options.device_index.
    std::vector<int> devices{};
    int lanes_per_device = 1;
    WorkerFactory factory{};  // Default: worker processes (tests: scripted workers)
  };

  LanePool(EngineOptions options, Store& store, Settings settings);
  ~LanePool();  // the ahead builds stop first, then the lanes' workers
  LanePool(const LanePool&) = delete;
  LanePool& operator=(const LanePool&) = delete;

  size_t size() const { return lanes_.size(); }
  Lane& lane(size_t i) { return *lanes_[i]; }
  const Lane& lane(size_t i) const { return *lanes_[i]; }
  const EngineOptions& options() const { return options_; }
  Store& store() { return store_; }

  // Starts the lane's workers (hello), once; sets its environment. The first lane that
  // answers decides arch() and the builds made ahead. Error: its workers did not start
  // (the lane's environment is then the fingerprint of no hello, and Start may be
  // called again).
  Result<Json> Start(Lane& lane);
  // The arch recorded with attempts: the flag, else the first started lane's device.
  std::string arch() const;

  // For callers that share the lanes among threads (gen's task threads): a free lane,
  // waiting for one; Release gives it back.
  Lane& Acquire();
  void Release(Lane& lane);

  // How StartAheadBuilds treats candidates that come later.
  enum class Ahead {
    kKnownOnly,  // only `known` is built ahead (eval: the jobs are known at the start)
    kOpen,       // BuildAhead will bring more (serve): the toolchain's one-time entries now
  };
  // Starts the compile pool on `threads` threads (-1: one per CPU core; 0: none) that
  // every lane builds through, and queues `known` (candidates, with their task file's
  // path) in order: compiled formats' builds, KernelBench files' load_inline calls noted
  // and built (InlinePrebuild). kKnownOnly: no pool when nothing of `known` builds ahead,
  // at most one thread per build when no file calls load_inline. The toolchain's
  // one-time entries are made first when a file calls load_inline or kOpen. Nothing is
  // started without a started lane (its hello names the builds). Call once, before the
  // lanes verify.
  void StartAheadBuilds(int threads, const std::vector<std::pair<Candidate, std::string>>& known, Ahead ahead);
  // Queues one more candidate's build (after StartAheadBuilds); nothing without a pool.
  void BuildAhead(const Candidate& candidate, const std::string& task_path);

  // The policy an attempt of `task` applies when `choice` is asked for ("" = the
  // options'): `choice`, else (kPolicyTask) the task's own, known once a lane described
  // the task; with `lane`, described now when it is not known. "" when unknown.
  std::string AppliedPolicy(const TaskFile& task, const std::string& choice, Lane* lane = nullptr);

  // The stored record that answers `spec` (the reuse rule above) under the arch of
  // `lane` (null: arch()), resolving the policy as AppliedPolicy does; nullopt when none
  // does, when the policy is not known, or with spec.force.
  std::optional<AttemptRecord> Stored(const AttemptSpec& spec, Lane* lane = nullptr);

  // One attempt on `lane`: the stored record when one answers it (Stored), else a
  // verification, recorded in the store unless `keep` returns false once it ended.
  // A stored record of another task name (the same bytes) is recorded again under
  // spec.task's name when spec.sample is set, so that the run holds the sample.
  LaneAttempt Attempt(Lane& lane, const AttemptSpec& spec, const std::function<bool()>& keep = {});

  // Writes a record made without a lane (serve's parse errors): backend, arch and
  // engine version filled when empty.
  Status Record(AttemptRecord& record);

 private:
  void LearnTaskPolicy(const std::string& task_hash, const std::string& policy);

  const EngineOptions options_;
  Store& store_;
  // Declared before the lanes: destroyed after them. The noting of load_inline calls
  // feeds the pool: it goes first.
  std::unique_ptr<CompilePool> pool_;
  std::unique_ptr<InlinePrebuild> inline_calls_;
  std::vector<std::unique_ptr<Lane>> lanes_;

  mutable std::mutex mu_;
  std::condition_variable freed_;
  std::vector<Lane*> free_;
  Json hello_;  // the first answered hello (builds ahead), null before
  std::string arch_;
  // The task's own policy (KVAULT_META "policy") by task hash, learned from describes
  // and from attempts under kPolicyTask.
  std::map<std::string, std::string> task_policies_;
};

}  // namespace kvault
