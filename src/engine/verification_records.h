#pragma once
// What one verification found, record by record (docs/store.md, `cases`;
// docs/timing.md, "Results"; docs/adversarial.md): the compared calls of its
// correctness runs, one record per timed performance case, the plausibility re-check,
// a stage run again alone after running out of memory, and the wall seconds of its
// phases. `Verification` holds them typed, in the order they were made; CasesJson is
// the one way they become the store's `cases` column and the `cases` of `--json`
// output (a JSON array of objects, timing, re-check and run-alone records marked by
// `kind`, the phases last), ReadCases the one way a stored column is read back.
//
//   v.records.push_back(CorrectnessRecord{...});       // as the verification goes
//   Json cases = CasesJson(v.records, v.phases);       // store, --json
//   StoredCases stored = ReadCases(record.cases);      // report, feedback, serve
//   for (const TimingRecord* t : Timings(stored.records)) ...
//
// Pure value types and functions; thread-compatible.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "util/json.h"

namespace kvault {

// --- phases ----------------------------------------------------------------------

// The stages of one verification whose wall seconds are kept (engine/phase_clock.h;
// docs/cli.md), in the order a verification reaches them. kTimingWait (the wait for
// the device's timing lock) is taken out of the stage it happened in; kGateWait (the
// waits for shared holds of the device's gate) stays part of its stages.
enum class Phase {
  kDescribe,
  kBuild,
  kRecordInline,
  kMemoryWait,  // the wait for the verification's device memory lease, before its worker starts
  kWorkerStart,
  kLoad,
  kCorrectness,
  kTimingPrepare,
  kTimingWait,
  kTiming,
  kRecheck,
  kGateWait,
};
inline constexpr std::array<Phase, 12> kPhases = {
    Phase::kDescribe,    Phase::kBuild,         Phase::kRecordInline, Phase::kMemoryWait,
    Phase::kWorkerStart, Phase::kLoad,          Phase::kCorrectness,  Phase::kTimingPrepare,
    Phase::kTimingWait,  Phase::kTiming,        Phase::kRecheck,      Phase::kGateWait};

std::string_view ToString(Phase p);  // "describe", "worker_start", "timing_wait", ...
std::optional<Phase> PhaseFromString(std::string_view name);
// The phases whose time the device is busy with the verification (serve's
// kvault_device_busy_seconds_total): correctness, timing and recheck.
bool IsDevicePhase(Phase p);

// Wall seconds per phase reached.
class Phases {
 public:
  void Add(Phase p, double seconds);
  void Set(Phase p, double seconds) { seconds_[Index(p)] = seconds; }
  std::optional<double> Seconds(Phase p) const { return seconds_[Index(p)]; }
  bool empty() const;
  bool operator==(const Phases& other) const = default;

  // {"describe": 0.01, "build": 1.4, ...}: the phases reached.
  Json ToJson() const;
  // The reverse; names of no phase and values that are not numbers are skipped.
  static Phases FromJson(const Json& seconds);

 private:
  static size_t Index(Phase p) { return static_cast<size_t>(p); }
  std::array<std::optional<double>, kPhases.size()> seconds_{};
};

// --- records ---------------------------------------------------------------------

// One call of a correctness run compared with the reference, or a run that ended
// before its outputs were compared (docs/adversarial.md).
struct CorrectnessRecord {
  enum class Status {
    kOk,                  // the call's outputs match
    kMismatch,            // they differ: message, worst_path and worst_index say where
    kInputsModified,      // the candidate wrote into its inputs (nothing compared)
    kOutputAliasesInput,  // an output is a view of an input where the reference's is not
  };
  std::string case_name;  // the task's case
  int64_t seed = 0;
  std::string distribution;  // "task" | "signed" | "heavy_tailed"
  Status status = Status::kOk;
  // The comparison (set unless the run ended before it).
  struct Comparison {
    std::string call;  // "first", or "repeat": the same inputs again, fresh copies
    double max_abs_error = 0, max_rel_error = 0;
    int64_t mismatched = 0;  // elements outside tolerance
    int64_t compared = 0;    // elements compared
    // Where the outputs were compared when the run's outputs stayed on the device
    // ("device" | "host", docs/device-compare.md); empty for runs compared in files.
    std::string compared_on;
    // Of a mismatch: the first problem and the worst element.
    std::string message, worst_path;
    std::vector<int64_t> worst_index;
    bool operator==(const Comparison&) const = default;
  };
  std::optional<Comparison> comparison;
  bool operator==(const CorrectnessRecord&) const = default;
};
std::string_view ToString(CorrectnessRecord::Status s);  // "ok", "mismatch", "inputs_modified", ...

// One side's times in a timing record ("reference_..." and "candidate_..." fields;
// docs/timing.md, "Results").
struct TimedSide {
  // The warm-up's time per call (its host round trip included), and its device time
  // per call when the worker measured one; null when the worker sent none.
  std::optional<double> call_ms, device_call_ms;
  // The primary series (cold samples when the cache was flushed, else warm): median,
  // spread, samples and relative noise (NaN: written as null). Unset when it is empty.
  struct Summary {
    double median_ms = 0, iqr_ms = 0;
    int64_t samples = 0;
    double noise = 0;
    bool operator==(const Summary& o) const;
  };
  std::optional<Summary> primary;
  // Median and spread of the cold and the warm samples; median of the samples' wall
  // time. Unset when there were none.
  struct Spread {
    double median_ms = 0, iqr_ms = 0;
    bool operator==(const Spread&) const = default;
  };
  std::optional<Spread> cold, warm;
  std::optional<double> wall_ms;
  bool operator==(const TimedSide&) const = default;
};

// What the engine's own clock made of the candidate's reported times (docs/timing.md,
// "What the engine trusts").
struct EngineClockCheck {
  double reference_overhead_ms = 0;            // median of the per-sample overheads
  std::vector<double> reference_overheads_ms;  // per sample, to the microsecond
  double allowance_ms = 0;
  double candidate_reported_ms = 0, candidate_clocked_ms = 0;
  bool applied = false;  // the candidate's samples were raised to what the clock saw
  bool blind = false;    // the samples' clock could not have seen a 2x forgery
  // Where it was blind: long bursts of both sides, clocked.
  struct Bursts {
    int64_t replays = 0, pairs = 0;
    double reference_reported_ms = 0, reference_clocked_ms = 0;
    double candidate_reported_ms = 0, candidate_clocked_ms = 0;
    bool applied = false;  // the candidate's samples were scaled by what the bursts took
    bool operator==(const Bursts&) const = default;
  };
  std::optional<Bursts> bursts;
  // The CPU time the candidate's other threads used around its samples, read from
  // outside (engine/cpu_charge.h): per call, the primary series' medians.
  struct Cpu {
    int64_t cores = 0;
    double reference_overhead_ms = 0, allowance_ms = 0;
    double candidate_reported_ms = 0, candidate_charged_ms = 0;
    bool applied = false;  // the candidate's samples were raised to the charge
    bool operator==(const Cpu&) const = default;
  };
  std::optional<Cpu> cpu;
  bool operator==(const EngineClockCheck&) const = default;
};

// Engine wall milliseconds of the steps of one timed case (`stage_ms`); unset: not reached.
struct TimingSteps {
  std::optional<double> prepare, drain, start, sampling, sampling_compare, compare, finish;
  bool operator==(const TimingSteps&) const = default;
};

// One timed performance case ({"kind": "timing"}; docs/timing.md, "Results").
struct TimingRecord {
  std::string case_name;
  bool device_quiet = true;     // every other lane's run in flight had ended
  int64_t turn_candidates = 1;  // > 1: a group turn
  int64_t warmup_ms = 0;
  std::optional<int64_t> flush_bytes;  // the cache flush's size; null: no flush
  bool reference_kept = false;         // the reference's side was kept from an earlier timing
  Json sensors_before;                 // the device's readings (an object), or null
  Json sensors_after;
  std::string method;                         // "cuda_events" | "cuda_graph" | "monotonic_clock"
  std::optional<std::string> graph_fallback;  // why a graph could not be captured
  std::optional<int64_t> graph_calls;         // calls per graph replay, the same on both sides
  std::string samples_on;  // where sample outputs were compared: "files" | "device" | "unchecked"
  int64_t rounds = 0;
  std::string stop;  // the stopping rule's reason (timing_statistics.h)
  int64_t samples_compared = 0;
  TimedSide reference, candidate;
  std::optional<double> speedup;  // reference median / candidate median; null: not finite
  // The samples followed a cache flush; then the warm samples' ratio (null: not finite).
  bool flushed = false;
  std::optional<double> warm_speedup;
  std::optional<EngineClockCheck> engine_clock;
  std::optional<double> recheck_max_abs_error;  // over the timed outputs compared
  std::string recheck;                          // "ok" | "skipped" | "mismatch"; empty: not reached
  std::string recheck_on;                       // "files" | "device"; empty: not compared
  TimingSteps stage_ms;
  bool operator==(const TimingRecord&) const = default;
};

// The re-check of a speedup above the plausible bound ({"kind": "recheck"};
// engine/plausibility_recheck.h).
struct RecheckRecord {
  double bound = 0;
  double speedup_before = 0;
  // The speedup held against the bound (engine/speedup_bound.h) before and after;
  // unset in records made before the bound judged the reported speedup too.
  std::optional<double> judged_before, judged_after;
  std::string failed;  // the step that failed; empty when the re-check ran to its end
  // When it ran to its end: the speedup measured again (unset: none), and whether it
  // is still above the bound (then no speed term in the reward, `why` says so).
  std::optional<double> speedup_after;
  bool still_implausible = false;
  std::string why;
  bool operator==(const RecheckRecord&) const = default;
};

// A stage that ran out of memory beside other lanes' work, run again with the device
// to itself ({"kind": "alone_after_oom"}); with "whole_memory": true, run again once
// more with the device's memory to itself too (no other verification's lease).
struct AloneAfterOomRecord {
  std::string where;  // the stage
  std::string first;  // the previous attempt's message (at most 400 bytes)
  bool whole_memory = false;
  bool operator==(const AloneAfterOomRecord&) const = default;
};

using VerificationRecord = std::variant<CorrectnessRecord, TimingRecord, RecheckRecord, AloneAfterOomRecord>;
using VerificationRecords = std::vector<VerificationRecord>;

// The timing records of `records`, from index `from` on, in order.
std::vector<const TimingRecord*> Timings(const VerificationRecords& records, size_t from = 0);
// The last re-check record, or nullptr.
const RecheckRecord* FindRecheck(const VerificationRecords& records);

// One record as it is stored (an object of the `cases` array).
Json RecordJson(const VerificationRecord& record);
// The `cases` array: every record in order, then {"kind": "phases", "seconds": {...}}
// when `phases` is set.
Json CasesJson(const VerificationRecords& records, const std::optional<Phases>& phases);

// A stored `cases` array read back: the records it holds in order, and its phases
// (unset for attempts recorded before phases were). What cannot be read as a record
// (not an object, an unknown kind or status, a field of the wrong type) is skipped.
struct StoredCases {
  VerificationRecords records;
  std::optional<Phases> phases;
};
StoredCases ReadCases(const Json& cases);

}  // namespace kvault
