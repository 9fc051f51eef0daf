#pragma once
// Verifier: the verification cascade for one lane (one device, one thread).
//
//   Verifier v(options);
//   Verification out = v.Verify(task, candidate);   // never throws for kernel faults
//
// Cascade (Verify, one member per stage): format/backend check (CheckFormat) ->
// describe task (DescribeTask) -> build compiled formats (BuildCandidate) and a
// KernelBench file's load_inline calls (BuildInlineModules) -> a fresh worker
// (StartCandidateWorker) -> load (LoadCandidate) -> every correctness case and
// run (CheckAllCorrectness; each run: reference output, cached -> the candidate's
// calls on fresh inputs -> its inputs -> its outputs compared in this process or on
// the device: CheckRun) -> time performance cases, interleaved with the reference,
// with the device to itself (TimeCandidate) -> an implausible speedup re-checked
// (RecheckSpeedup) -> speedup and reward (Done).
// Thread safety: not thread-safe; use one Verifier per lane.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "candidate/candidate.h"
#include "engine/constant_control.h"
#include "engine/correctness_runs.h"
#include "engine/candidate_build.h"
#include "engine/device_gate.h"
#include "engine/device_session.h"
#include "engine/inline_record.h"
#include "engine/options.h"
#include "engine/output_handoff.h"
#include "engine/lane_activity.h"
#include "engine/phase_clock.h"
#include "engine/timed_case.h"
#include "engine/timing_lock.h"
#include "engine/turn_group.h"
#include "engine/reference_cache.h"
#include "engine/verification.h"
#include "engine/worker_outcome.h"
#include "task/task_file.h"
#include "util/files.h"

namespace kvault {

class Verifier {
 public:
  explicit Verifier(EngineOptions options, WorkerFactory factory = {});

  Verification Verify(const TaskFile& task, const Candidate& candidate);

  // Device and software of this lane's workers (for the environment fingerprint).
  Result<Json> Hello() { return session_.Hello(); }

  // Told the name of each stage of Verify as it starts ("describe", "build",
  // "worker_start", "load", "correctness", "timing" only when the task has
  // performance cases and timing is on, "recheck" only when a speedup above the
  // plausible bound is re-checked), on the calling thread; for progress output.
  // Default: none.
  void SetStageListener(std::function<void(const char* stage)> listener) {
    stage_listener_ = std::move(listener);
  }

  // How this lane builds compiled candidates. Default: BuildExtension.
  void SetBuilder(BuildFunction builder) { builder_ = std::move(builder); }

  // The custom-kernel policy of the next verifications (EngineOptions::policy: task,
  // any, fused or custom_kernel); the reward service sets it per request.
  void SetPolicy(std::string policy) { options_.policy = std::move(policy); }

  // The custom-kernel policy the next Verify of `task` applies: the policy set, or
  // (kPolicyTask) the task's own, described once per task as Verify describes it.
  // Error: the task could not be described (Verify then says why).
  Result<std::string> PolicyFor(const TaskFile& task);

  // What this lane is doing now (engine/lane_activity.h): Verify enters each stage
  // and names each wait (the device's gate, memory leases, the timing lock, the compile
  // pool); the caller begins and ends each attempt. Read from any thread.
  LaneActivity& activity() { return activity_; }

 private:
  // What one verification knows as its stages go (Verify).
  struct Attempt {
    const TaskFile& task;
    const Candidate& candidate;
    bool compiled_format = false;          // extension or native: the engine builds it
    Verification v{};                      // the outcome so far
    std::optional<TaskInfo> info{};        // the task as described
    std::optional<TaskInfo> checked{};     // with the format's tolerances: what is checked and timed
    std::string policy{};                  // the custom-kernel policy applied
    std::string module_path{}, module_name{};  // the built candidate
    std::optional<TempDir> scratch{};      // the verification's folder (load_inline sources too)
    WorkerConnection* worker = nullptr;    // the candidate's worker
    Json load{};                           // its load request (a re-check loads it again)
    Json inline_modules = Json::array();   // kernelbench: their builds, [{digest, path, module}]
  };
  // The stages of Verify, in order. Each returns false once a.v holds the outcome.
  bool CheckFormat(Attempt& a);           // the backend must run the candidate's device code
  void CompileOnly(Attempt& a);           // --compile-only: the build is all
  // ReferenceWorkers::kPerTask: replaces the reference worker when `task` is not the
  // one it ran.
  void BindReferenceWorker(const TaskFile& task);
  bool DescribeTask(Attempt& a);          // the task's cases and settings (once per task)
  bool BuildCandidate(Attempt& a);        // compiled formats, through the compile cache
  bool BuildInlineModules(Attempt& a);    // kernelbench: its load_inline calls, likewise
  std::optional<NotedInlineCalls> NoteInlineCalls(Attempt& a);
  // A GPU's memory, leased by the task's inputs (what its correctness runs or its timing
  // hold, the larger; DeviceGate::LeasableBytes shared out): a verification of inputs of
  // several GB waits until it fits beside the others (docs/timing.md, "Memory is shared").
  // Its wait is the phase memory_wait.
  bool LeaseDeviceMemory(Attempt& a);
  bool StartCandidateWorker(Attempt& a);  // the scratch folder and a fresh worker
  bool LoadCandidate(Attempt& a);
  bool CheckAllCorrectness(Attempt& a);   // every correctness case and run: passed
  bool TimeCandidate(Attempt& a);         // prepared, then each performance case's turn
  bool RecheckSpeedup(Attempt& a);        // an implausible speedup checked again
  void DisownUnsupportedClaim(Attempt& a);  // a worker's `unsupported` only for native limits
  Verification Done(Attempt& a);          // the reward, seconds and phases
  void Announce(Phase stage);             // to the stage listener, if any

  // The task's description (cached by content); the reference call's failure judged,
  // or the task's `task_error` for a description the engine cannot use.
  Result<TaskInfo, TrustedFailure> Describe(const TaskFile& task);
  // a.scratch, unless it exists (the load_inline sources may need it before the worker).
  bool CreateScratch(Attempt& a);
  // Fills v with a build outcome; returns the module path (empty on failure).
  // `extra_flags`, `extra_link_flags`: the compiler and linker flags of a load_inline call.
  bool Build(const Candidate& c, Verification& v, std::string* module_path,
             std::string* module_name, const std::vector<std::string>& extra_flags = {},
             const std::vector<std::string>& extra_link_flags = {});
  // Whether case `case_index`'s outputs are compared on the device (engine/output_handoff.h),
  // in its correctness runs and its timing alike: a GPU backend, workers that can, and
  // inputs of at least options.device_compare_min_bytes.
  bool OutputsOnDevice(const TaskInfo& task, int case_index);
  // A request to the reference worker under the device gate (DeviceSession::AskReference;
  // default timeout: timeouts.reference). A failure is judged by worker_outcome.h's one
  // rule (JudgeTrustedFailure, TrustedStartFailure): use its status, never a fixed one.
  ReferenceReply CallReference(const Json& request, const std::string& what,
                             std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  // Runs every correctness case on `runs`, comparing each output with the reference.
  // With `constants`, each case's reference outputs are watched for one constant that
  // would pass them all (ConstantControl, by case index).
  bool CheckCorrectness(const TaskInfo& task, Verification& v, const std::string& scratch,
                        const std::vector<CorrectnessRun>& runs,
                        std::map<int, ConstantControl>* constants = nullptr);
  // After every correctness run passed: task_error when every correctness case's
  // reference outputs were one constant within tolerance (docs/adversarial.md).
  bool RejectDegenerate(const std::map<int, ConstantControl>& constants, Verification& v);

  // One correctness run: a case, a seed and an input distribution.
  struct RunPlan {
    const TaskInfo& task;
    int case_index = 0;
    CorrectnessRun run;
    std::string where;   // how messages name it: "case small seed 2"
    std::string tag;     // names its files
    bool on_device = false;  // its outputs compared on the device (OutputsOnDevice)
    std::string scratch;
    ConstantControl* constant = nullptr;  // watches the reference's outputs, when set
    CorrectnessRecord Record() const;  // the fields every record of this run starts with
  };
  // What a correctness run has made so far, step by step.
  struct RunState {
    std::string reference_path, reference_digest;  // the reference's output and inputs
    std::optional<ReferenceEntry> cached;          // the reference cache's entry, when it gave one
    DeviceOffer offer;     // the reference's output offered on the device; ended on every way out
    HandoffSpec handoff;   // where the offer is made
    std::string out, repeat_out;  // the candidate's outputs of its checked and repeated calls
    Json reply;            // the candidate's worker's reply to `run`
  };
  // A correctness run: each step returns false once v holds the outcome. A run that
  // ran out of memory is judged by JudgeOutOfMemory.
  bool CheckRun(const RunPlan& run, const Json& hello, Verification& v);
  bool RunSteps(const RunPlan& run, const Json& hello, Verification& v);
  // Adds the run's reference output to its case's ConstantControl (run.constant).
  void WatchReference(const RunPlan& run, const RunState& state);
  // The one place a stage that ran out of memory is judged (docs/timing.md, "Memory is
  // shared"); the candidate's claim of it is never taken as the device's state. `v`
  // holds the stage's outcome, `before` the verification before the stage; `again`
  // runs the stage once more into its argument. Out of memory (the candidate's `oom`,
  // the reference's out-of-memory task_error) runs again with the device to itself
  // (the gate held exclusively); out of memory again while other lanes of this process
  // live on a GPU runs again with the device's memory to itself too (no other
  // verification holds a lease: LeaseWhole, waited for up to timeouts.time, else
  // infra_error). The reference out of memory then, while this verification's candidate
  // is loaded, is asked again without the candidate's worker (`reference_alone`, when
  // given: the stage's reference part, into its argument): when it then fits, the
  // candidate's memory was to blame (its `oom`). The last run's outcome is the verdict.
  // Each run again adds an AloneAfterOomRecord. Returns whether the stage succeeded in
  // the end; false, with v unchanged, when v did not run out of memory or this lane
  // already held the device (a timing's turn).
  bool JudgeOutOfMemory(Verification& v, const Verification& before, const std::string& where,
                        const std::function<bool(Verification&)>& again,
                        const std::function<bool(Verification&)>& reference_alone = {});
  // A timing case whose both sides need more memory than the device can lease to one
  // lane (TimingFootprintBytes): the candidate's `oom` there becomes infra_error.
  void BeyondTheDevice(const TimedCaseRequest& req, const std::string& where, Verification& v);
  // Whether other lanes' workers may have held the memory that `v` (out of memory with
  // the device to itself) lacked: a GPU, other lanes of this process on it, and no ask
  // larger than the whole device.
  bool OthersMayHoldTheMemory(const Verification& v);
  // 1. The reference's output: from the reference cache, or made again and offered on
  //    the device.
  bool MakeReference(const RunPlan& run, const Json& hello, RunState& state, Verification& v);
  // 2. The candidate's checked and repeated calls, under a shared hold of the device
  //    (the outputs written after it).
  bool RunCandidate(const RunPlan& run, RunState& state, Verification& v);
  // 3. Its inputs: the reference's (InputDigestVerdict, engine/output_check.h) and unmodified.
  bool CheckInputs(const RunPlan& run, RunState& state, Verification& v);
  // 4. Both calls' outputs against the reference's (CompareOutputs), one record each.
  bool CompareRun(const RunPlan& run, RunState& state, Verification& v);
  // The reference worker's `reference` for `run`, its output to `out` (or, with
  // `handoff`, offered on the device).
  ReferenceReply AskReferenceRun(const RunPlan& run, const std::string& out, const Json& handoff = Json());
  // The timing of case `case_index` (engine/timed_case.h). Its turn takes the device's
  // timing lock and the gate exclusively for the warm-up and rounds (the warm-up from
  // the lock's note, TimingLock::WarmupMs), gives the lock back and shares the gate for
  // the re-check's device work, then releases it (holding_, timing_lock_).
  TimedCaseRequest TimingRequest(const TaskInfo& task, int case_index, const std::string& scratch);
  // Whether anything is timed: performance cases, and timing not switched off.
  bool Timed(const TaskInfo& task) const;
  // Prepares the first performance case (PrepareCase) under a shared hold of the gate,
  // before the device's lock: nullopt when nothing will be timed or the preparation
  // failed (v then holds the outcome).
  std::optional<PreparedCase> PrepareTiming(const TaskInfo& task, Verification& v,
                                            const std::string& scratch);
  // One performance case's sides prepared beside other lanes' work (again alone after
  // running out of memory, as CheckRun): nullopt when it failed (v holds the outcome).
  std::optional<PreparedCase> Prepare(const TimedCaseRequest& req, Verification& v);
  // Times every performance case (engine/timed_case.h); `scratch` holds re-check outputs.
  // `first`: the first case as PrepareTiming prepared it (else prepared here). Leaves
  // neither the device's lock nor the gate held.
  void Time(const TaskInfo& task, Verification& v, const std::string& scratch,
            std::optional<PreparedCase> first = std::nullopt);
  // The sums of the timed cases' medians: the speedup's terms.
  struct TimedSums {
    double reference_ms = 0, candidate_ms = 0;
  };
  // Whether a turn may be shared with other lanes' candidates (engine/turn_group.h).
  enum class Turn { kGrouped, kAlone };
  // One performance case, prepared: timed in a turn, re-checked, its record added to v
  // and its medians to `sums`; out of memory anywhere in it judged by JudgeOutOfMemory
  // (again alone: prepared again and timed in a turn of its own). False when it failed
  // (v holds the outcome).
  bool TimeCase(const TimedCaseRequest& req, PreparedCase prepared, Verification& v, TimedSums& sums);
  // TimeCase's one try, in a turn of `turn`'s kind; false with the failure in v.
  bool TimeOnce(const TimedCaseRequest& req, PreparedCase prepared, Verification& v, TimedSums& sums, Turn turn);
  // Times `me` (prepared) in a turn of the device: grouped, one it leads, with the other
  // lanes' candidates of the same case that wait meanwhile, or another lane's it joins
  // (engine/turn_group.h); alone, one of its own. Then its re-check. me.timed holds the
  // record or failure.
  void TimeInTurn(TurnMember& me, Turn turn);
  // Which candidates may share a turn: same task text, case, seed, tolerance, outputs' place.
  std::string TurnKey(const TimedCaseRequest& req) const;
  // The device's timing lock given back, its note written first; no-op when not held.
  void GiveBackLock();
  // Ends a turn on every way out: the gate released, the lock given back.
  void EndTurn();
  // After timing: a speedup above the plausible bound is re-checked before it is
  // accepted (plausibility_recheck.cc). False when the re-check fails (v then holds
  // the outcome). `load` is the candidate's load request, to load it in a fresh worker.
  bool RecheckImplausible(const TaskInfo& task, Verification& v, const std::string& scratch,
                          const Json& load);
  std::string ReferenceKey(const TaskInfo& task, int case_index, int seed, const Json& hello,
                           const std::string& distribution) const;
  Verification Finish(Verification v);
  // A shared hold of the device's gate around work on the device (engine/device_gate.h);
  // empty while this lane holds the gate for its timing (holding_). Adds its wait to
  // the phases (clock_).
  DeviceGate::Hold UseDevice();
  // What `acquire` returns (a hold or lease of the device's gate, waited for): the wait
  // named as what this lane waits `on` (activity_) and added to the phases' gate wait.
  template <class Acquire>
  auto WaitForGate(std::string on, Acquire acquire);

  // This lane's folder under the cache's tmp/ (EngineOptions::lane_dir): made before
  // options_ names it, gone with the lane.
  std::optional<TempDir> lane_dir_;
  EngineOptions options_;
  BuildFunction builder_;
  std::function<void(const char*)> stage_listener_;
  DeviceSession session_;
  ReferenceCache references_;
  std::map<std::string, TaskInfo> described_;  // by task hash
  // The task whose code the reference worker has run (ReferenceWorkers::kPerTask).
  std::string reference_task_;
  std::shared_ptr<DeviceGate> gate_;
  DeviceGate::Member member_;  // this lane among the device's lanes (OthersMayHoldTheMemory)
  // The device memory leased to the verification in progress (LeaseDeviceMemory), whole
  // while a stage runs again with the device's memory to itself; released when it ends.
  DeviceGate::MemoryLease memory_;
  // Whether the verification in progress has loaded candidate code in its candidate
  // worker (LoadCandidate): the reference's out of memory may then be the candidate's.
  bool candidate_loaded_ = false;
  std::shared_ptr<TurnGroups> turns_;  // the device's group turns in this process
  // A timing's turn (TimingRequest): the device's lock from the warm-up to the end of
  // the rounds; this lane's hold of gate_, exclusive for the warm-up and rounds, shared
  // for the re-check's device work.
  std::optional<TimingLock> timing_lock_;
  DeviceGate::Hold holding_;
  // Where this verification's time goes, its waits for the gate's shared holds and
  // the device's lock included (engine/phase_clock.h).
  PhaseClock clock_;
  LaneActivity activity_;
};

// The correctness seeds of a task: 1..task.seeds.
std::vector<int> CorrectnessSeeds(const TaskInfo& task);
constexpr int kTimingSeed = 1000;

}  // namespace kvault
