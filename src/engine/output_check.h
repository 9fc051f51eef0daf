#pragma once
// The two decisions the engine makes about a candidate's run, in one place each, for
// the correctness runs (Verifier) and the timing re-check (timed_case):
//
//  - InputDigestVerdict: the candidate's worker reported inputs other than the
//    reference's. Its reply can be forged (docs/threat-model.md, "Forged replies"),
//    so the reference worker makes the same inputs once more and decides whose the
//    difference is.
//  - CompareOutputs: the candidate's outputs against the reference's, on the device
//    when the candidate's worker delivered them into the reference's offer
//    (engine/output_handoff.h), else from files (the offered reference output then
//    written to its file first).
//
//   if (auto bad = InputDigestVerdict(ref_digest, cand_digest, make_again)) fail(*bad);
//   ComparedOutputs got = CompareOutputs(offer, run_reply, files, tolerance);
//   if (got.failure) fail(*got.failure);
//   for (const CompareReport& call : got.calls) ...
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "check/compare.h"
#include "engine/outcome.h"
#include "engine/output_handoff.h"
#include "engine/worker_outcome.h"
#include "util/json.h"
#include "util/result.h"

namespace kvault {

// Why a run's check ended without a comparison: the outcome and one line (without
// the run's name, which the caller puts in front).
struct RunFault {
  OutcomeStatus status = OutcomeStatus::kInfraError;
  std::string message;
};

// The most bytes a candidate's output file is read to: twice the reference's output
// file plus 1 MiB. Larger is not the reference's output, and would cost memory (a
// sparse file reported as an output read gigabytes).
uint64_t CandidateOutputLimit(uint64_t reference_bytes);

// The candidate's worker reported `candidate_digest` for inputs whose reference made
// `reference_digest`. `make_again` asks the reference worker for the same inputs once
// more and returns their digest (or its failure, judged by JudgeTrustedFailure). nullopt
// when the two digests agree (make_again is not called); else `crash` when the reference
// worker reproduces its own digest (the candidate's worker reported inputs it did not
// make), `task_error` when it does not or its task code fails making them (the task's
// inputs are not a function of the seed), and the failure's own status (`infra_error`)
// when the call failed for the engine's reasons. The reference running out of memory
// making them again says nothing of the inputs: that fault says so and keeps the
// failure's status and PyTorch's words (ReferenceRanOutOfMemory, worker_outcome.h), and
// the caller judges it as any reference out of memory (Verifier::JudgeOutOfMemory runs
// the stage again alone, then with the whole memory, then without the candidate's worker).
std::optional<RunFault> InputDigestVerdict(const std::string& reference_digest,
                                           const std::string& candidate_digest,
                                           const std::function<Result<std::string, TrustedFailure>()>& make_again);

// The files of one run's comparison.
struct OutputFiles {
  std::string reference;               // the reference output (written here when it was offered)
  std::vector<std::string> candidate;  // the candidate's outputs, one per call, in call order
  bool remove_reference = false;       // a scratch file (not the reference cache's): removed after
  std::string device_stem;             // where a call the device finds different is written
};

struct ComparedOutputs {
  // One report per call, in call order, up to the first that does not match.
  std::vector<CompareReport> calls;
  bool on_device = false;           // compared by the reference worker on the device
  std::optional<RunFault> failure;  // nothing (or not everything) could be compared
};

// Compares the candidate's outputs of one run (`candidate_reply`: its worker's reply to
// `run` or `time_finish`) with the reference's. On the device when `offer` is open and
// the reply says "delivered": a forged "delivered" (the buffers never taken) is the
// candidate's `crash`, a device comparison that fails is `infra_error`. Otherwise
// from files: an open offer is written to files.reference first (failing: the judged
// failure's status, worker_outcome.h),
// an unreadable reference file is `infra_error`, an unreadable candidate file the
// candidate's `crash` (its worker wrote it; candidate code runs there). `device_done` (optional) is called once the
// reference worker's part is over, before a comparison from files; the candidate's
// files (and the reference's, with remove_reference) are removed after.
ComparedOutputs CompareOutputs(DeviceOffer& offer, const Json& candidate_reply, const OutputFiles& files,
                               const Tolerance& tolerance, const std::function<void()>& device_done = {});

}  // namespace kvault
