#pragma once
// The CPU time a candidate's other threads used around its timed calls, charged to its
// samples (docs/timing.md, "What the engine trusts").
//
// A timed sample's request draws the sample's inputs before the clock starts, and the
// seed is in the candidate's process from the request on: a thread of the candidate's
// can read it (the worker's own frames), draw the same inputs on another core and have
// the answer ready before the clock starts. The engine's clock of the request does not
// see work done beside it, only longer requests. So the engine reads, from outside,
// the CPU time of every process of each side (util/process_cpu.h) from before a
// sample's flush to its reply, less the busiest thread's (the worker's request loop):
// `others`. In a call, other threads can use at most the call's time on each of the
// `cores`; beyond the call, the reference's other threads show what an honest side uses
// (its worker reports the part inside its call, `call_others`: trusted code). So a
// candidate sample took at least
//     others / cores - (the reference's median of (others - call_others) / cores)
// per call: work its other threads did where the clock did not look counts as if it
// had been spread over every core inside the call, the most lenient reading. The
// floors replace the samples only when their median passes the reported median by
// more than `slack` plus twice the standard error of the reference's median and
// kCpuFloorMs, as the engine's clock's floors do.
//
//   std::optional<CpuCharge> c = ChargeOtherThreads(ref, cand, cores, slack, calls, flush);
//   if (c && c->applied) sample[i] = max(sample[i], c->floors[i]);
// Pure; thread-compatible.
#include <optional>
#include <vector>

namespace kvault {

// One side's samples, in the order taken.
struct CpuSeries {
  std::vector<double> reported;     // the whole sample's reported time (ms, all calls)
  std::vector<double> others;       // other threads' CPU from before its flush to its reply (ms)
  std::vector<double> call_others;  // the reference's: other threads' CPU inside its call (ms)
  std::vector<bool> cold;           // it followed a flush
};

struct CpuCharge {
  int cores = 1;
  double reference_overhead_ms = 0;  // median of the reference's (others - call_others) / cores
  double allowance_ms = 0;           // twice that median's standard error
  double candidate_reported_ms = 0;  // primary series' medians, per call
  double candidate_charged_ms = 0;
  bool applied = false;
  std::vector<double> floors;  // per candidate sample, per call
};

// Added to the allowance: below any timer's resolution.
inline constexpr double kCpuFloorMs = 0.02;

// nullopt when there is nothing to judge: a single core (what other threads ran took
// the clocked core's time, which the engine's clock sees), or series that are empty or
// of unequal lengths.
std::optional<CpuCharge> ChargeOtherThreads(const CpuSeries& reference, const CpuSeries& candidate, int cores,
                                            double slack, int graph_calls, bool flush);

}  // namespace kvault
