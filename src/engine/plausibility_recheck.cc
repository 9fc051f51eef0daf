// Verifier::RecheckImplausible: the plausibility bound on speedup (docs/adversarial.md).
//
// A speedup above the bound is not accepted as measured. The candidate is first
// checked again on fresh inputs in the same worker, after all the calls timing made
// (a candidate that stops computing after N calls, or replays once warm, is caught
// here); then it is loaded into a fresh worker, checked once more and timed again,
// and the second measurement is the one kept. A speedup still above the bound is
// kept but flagged (RecheckRecord::still_implausible) and earns no
// speed term in the reward (StillImplausible, Verifier::Finish; docs/reward.md).
#include "engine/plausibility_recheck.h"

#include <cstdio>

#include "engine/speedup_bound.h"
#include "engine/verifier.h"
#include "engine/worker_outcome.h"

namespace kvault {
namespace {
// "21.03", "50": for messages.
std::string Rounded(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", x);
  return text;
}
}  // namespace

bool StillImplausible(const VerificationRecords& records) {
  const RecheckRecord* recheck = FindRecheck(records);
  return recheck && recheck->still_implausible;
}

bool Verifier::RecheckImplausible(const TaskInfo& task, Verification& v, const std::string& scratch,
                                  const Json& load) {
  const double bound = PlausibleSpeedupBound(task, options_.plausible_speedup);
  // Held against the higher of the kept and the reported speedup (engine/speedup_bound.h).
  const double judged = SpeedupAgainstBound(v);
  if (judged <= bound) return true;
  const double first = *v.speedup;
  Announce(Phase::kRecheck);
  RecheckRecord record;
  record.bound = bound;
  record.speedup_before = first;
  record.judged_before = judged;
  auto fail = [&](const char* step) {
    record.failed = step;
    v.records.push_back(record);
    v.speedup.reset();
    v.message = "speedup " + std::to_string(first) + " above the plausible bound " + std::to_string(bound) +
                "; re-check " + step + ": " + v.message;
    return false;
  };
  if (!CheckCorrectness(task, v, scratch, RecheckRuns())) return fail("after timing, same worker");
  session_.Discard(WorkerRole::kCandidate);
  auto w = session_.Get(WorkerRole::kCandidate);
  if (!w) {
    v.status = OutcomeStatus::kInfraError;
    v.message = w.error();
    return fail("starting a fresh worker");
  }
  WorkerReply r = (*w)->Call(load, options_.timeouts.load);
  if (!ReplyOk(r)) {
    Verification failure = CandidateFailure(r, "load", options_.timeouts.load, (*w)->TakeLog());
    v.status = failure.status;
    v.message = failure.message;
    v.diagnostics = failure.diagnostics;
    return fail("loading in a fresh worker");
  }
  if (!CheckCorrectness(task, v, scratch, RecheckRuns())) return fail("in a fresh worker");
  const size_t timed_from = v.records.size();  // the second timing's records follow
  // Right after the first timing: the lock's note asks for the short warm-up.
  Time(task, v, scratch);
  if (v.status != OutcomeStatus::kPassed) return fail("timing again in a fresh worker");
  record.speedup_after = v.speedup;
  const double judged_after = SpeedupAgainstBound(v, timed_from);
  record.judged_after = judged_after;
  const bool still = judged_after > bound;
  record.still_implausible = still;
  if (still) {
    const std::string why = "speedup " + Rounded(judged_after) + " still above the plausible bound " +
                            Rounded(bound) + " after a re-check in a fresh worker: no speed term in the reward";
    record.why = why;
    v.message += "; " + why;
  }
  v.records.push_back(record);
  return true;
}

}  // namespace kvault
