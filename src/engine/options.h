#pragma once
// Settings of one verification. Every field has a default that works on the CPU
// backend; the CLI fills them from flags and the environment (docs/cli.md).
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "reward/reward.h"
#include "sandbox/policy.h"
#include "toolchain/backend.h"

namespace kvault {

class HelloEnvironment;

using std::chrono::milliseconds;

struct StageTimeouts {
  milliseconds compile{300'000};  // Default: 5 min (cold PyTorch headers are slow)
  milliseconds start{120'000};    // worker start + hello (importing torch)
  milliseconds describe{60'000};
  milliseconds reference{120'000};
  milliseconds load{300'000};     // KernelBench candidates may compile inline sources here
  milliseconds run{60'000};       // one case and seed
  milliseconds time{300'000};     // all performance cases
};

// How samples are taken (docs/timing.md): kEvents = device events around each call;
// kGraph = replays of a captured CUDA graph of many calls; kAuto = graphs when a
// side's call is shorter than graph_below_ms, events otherwise or when capture fails.
enum class GraphMode { kAuto, kNever, kAlways };

// The timer's settings (docs/timing.md); every field has its Default below.
struct TimingSettings {
  int warmup_ms = 100;          // warm-up of each side, by time (at least two calls); long
                                // enough for an idle GPU to reach its clocks (BENCHMARKS.md)
  int rewarm_ms = 10;           // the warm-up instead when the device ended a timing
  int rewarm_within_ms = 1000;  // at most this long ago (its clocks are still up)
  int drain_ms = 5000;          // longest wait for other lanes' device work to end
                                // before timing (a run that hangs cannot stall it longer)
  int min_samples = 10;         // per side and series, before the rule may stop
  int max_samples = 100;        // per side and series
  double min_ms = 20;           // of sampling, per case, before "settled" may stop
  double max_ms = 2000;         // wall cap of sampling, per case, both sides together
  double noise_target = 0.005;  // relative standard error of each median
  int batch = 5;                // cold and warm samples per side and round
  bool flush = true;            // flush caches before cold samples
  GraphMode graph = GraphMode::kAuto;
  // Device time per call below which graphs are used: their samples carry no host
  // round trip, which under a loaded CPU jitters by tens of microseconds (BENCHMARKS.md).
  double graph_below_ms = 0.5;
  bool recheck = true;          // compare the outputs of the last timed calls
  // The engine's clock overrules a candidate's reported samples when the median it
  // allows is above the reported one by more than this fraction (plus the spread of
  // the reference's own overhead; docs/timing.md, "What the engine trusts").
  double clock_slack = 0.10;
  // Candidates of one case waiting for the device at the same time share a turn, at
  // most this many (engine/turn_group.h; a GRPO group is 8). 1: every candidate times
  // alone. $KVAULT_GROUP_TURNS=off sets 1.
  int group_max = 8;
};

inline constexpr const char* kPolicyTask = "task";

// The policy an attempt runs under: `choice` (EngineOptions::policy), or the task's
// own when `choice` is kPolicyTask.
inline std::string AppliedPolicy(const std::string& choice, const std::string& task_policy) {
  return choice == kPolicyTask ? task_policy : choice;
}

// KernelBench's harness compares outputs with atol = rtol = 1e-2 (its leaderboard
// runs): `--tolerance kernelbench`.
constexpr double kKernelBenchTolerance = 1e-2;

// Which tasks one reference worker runs. kShared: every task of the run, one after
// another (a suite's own files). kPerTask: one task only; a lane that turns to another
// task replaces it, so that code of one task (kvault serve's clients send it) never
// runs in the process that prepares, runs and times another task's reference.
enum class ReferenceWorkers { kShared, kPerTask };

struct EngineOptions {
  Backend backend = Backend::kCpu;
  std::string arch;             // "" = the device's own
  bool compile_only = false;
  std::string python = "python3";  // $KVAULT_PYTHON
  std::string source_root;      // where python/ and include_hip/ live
  std::string cache_dir;        // $KVAULT_CACHE_DIR
  int device_index = 0;
  RewardKind reward = RewardKind::kPaper;
  StageTimeouts timeouts;
  TimingSettings timing;
  bool skip_timing = false;     // correctness only
  // Cases whose inputs reach this many bytes have their outputs (correctness runs,
  // timed samples, the re-check) compared on the device (docs/device-compare.md) when
  // the workers can; < 0: never. Moving outputs through files costs seconds per
  // candidate from tens of MiB on (BENCHMARKS.md, "The reward service").
  // $KVAULT_DEVICE_COMPARE_MIN_BYTES.
  int64_t device_compare_min_bytes = int64_t{16} << 20;
  // Speedups above this (or the task's KVAULT_META "plausible_speedup") are
  // re-checked in a fresh worker before they count (docs/adversarial.md). Default: 50.
  double plausible_speedup = 50.0;
  // A task whose reference outputs are one constant within tolerance over every
  // correctness run of every case is the task's error, not a pass (ConstantControl;
  // docs/adversarial.md, "Degenerate references").
  bool reject_degenerate = true;
  // Worker confinement (docs/sandbox.md). Default: off; the CLI reads KVAULT_SANDBOX*
  // (default auto) in ApplyEnvironment. DeviceSession adds the per-role paths.
  SandboxPolicy sandbox;
  // The binary whose `sandbox-exec` applies it (the CLI: itself). Empty: no sandbox.
  std::string sandbox_launcher;
  // The lane's own folder under the cache's tmp/ (set by each Verifier): its
  // verifications' scratch and its workers' folders go there, and its reference worker
  // may write only there and to refs/, never another lane's (docs/sandbox.md).
  // "": tmp/ itself.
  std::string lane_dir;
  // Set when KVAULT_SANDBOX* is malformed: every worker start fails with it.
  std::string sandbox_error;
  // The custom-kernel policy applied to every attempt (docs/adversarial.md, "Policy"):
  // kPolicyTask (the task's KVAULT_META "policy", default any), "any", "fused" or
  // "custom_kernel". The CLI's --policy; `gen` defaults to custom_kernel (task for
  // modu2func).
  std::string policy = "task";
  // The tolerance of every task's outputs when set (the CLI's --tolerance, --atol,
  // --rtol), in place of the task's own and the dtype's default (check/compare.h).
  std::optional<double> rtol, atol;
  // Fork candidate workers from a pre-imported zygote (worker/zygote.h) instead of
  // starting each from scratch. The CLI reads KVAULT_ZYGOTE (on|off, default on).
  bool zygote = false;
  // Default: kShared; kvault serve uses kPerTask (docs/threat-model.md).
  ReferenceWorkers reference_workers = ReferenceWorkers::kShared;
  // Shared by the lanes of a LanePool (it sets one): of their first workers, only the
  // first to be greeted reports the machine's build environment and backend probe, the
  // others' answers are completed from it (engine/hello_environment.h). Null: every
  // session's first worker reports them.
  std::shared_ptr<HelloEnvironment> hello_environment;
};

}  // namespace kvault
