#pragma once
// Times one performance case of a verification (docs/timing.md): the reference in
// the reference worker, the candidate in the candidate worker, same device, same
// inputs (each worker makes them on the device from the timing seed), interleaved
// by rounds the engine drives, stopped by the StoppingRule; then the outputs of the
// last timed calls are compared here. Two steps: the preparation (both sides build,
// make their inputs and make their first calls) runs beside other lanes' work; the
// warm-up and the rounds run with the device to itself (request.turn), the re-check
// beside other lanes' work again.
//
//   TimedCaseRequest req{task, case_index, kTimingSeed, options, scratch, tol, -1, turn};
//   PreparedCase p = PrepareCase(session, req);     // under a shared hold of the gate
//   if (p.failure) return *p.failure;               // the verification ends with this outcome
//   TimedCase t = TimeCase(session, req, std::move(p));  // under the exclusive hold
//   if (t.failure) return *t.failure;
//   v.records.push_back(t.record);
// Candidates of one case may share a turn (TimeTurn, RecheckCase; engine/turn_group.h).
// Not thread-safe (uses the lane's DeviceSession).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "check/compare.h"
#include "engine/device_gate.h"
#include "engine/device_session.h"
#include "engine/options.h"
#include "engine/verification.h"
#include "task/task_file.h"
#include "worker/protocol.h"

namespace kvault {

// The start of a timing's turn with the device to itself (DeviceTurn::alone).
struct TurnStart {
  bool device_quiet = true;  // every other lane's run in flight had ended
  int warmup_ms = -1;        // the warm-up the device's state asks for; < 0: the request's
};

// How a timing has the device to itself and gives it back (the Verifier's device lock
// and DeviceGate). Empty functions: the device is taken as quiet throughout.
struct DeviceTurn {
  // Before the warm-up: the device's lock, then other lanes' work on the device stops.
  // An error (the lock not had in time) ends the verification as infra_error.
  std::function<Result<TurnStart>()> alone;
  // After sampling: the lock goes to the next lane; other lanes' runs go on beside the
  // re-check.
  std::function<void()> share;
  // After the re-check's device work: the comparison in this process needs no hold.
  std::function<void()> done;
};

struct TimedCaseRequest {
  const TaskInfo& task;
  int case_index = 0;
  int seed = 0;
  const EngineOptions& options;
  std::string scratch;  // folder for the two output files of the re-check
  Tolerance tolerance;
  int warmup_ms = -1;   // each side's warm-up (TimeCase); < 0: the turn's, else options.timing.warmup_ms
  DeviceTurn turn;
  // Outputs compared on the device (engine/output_handoff.h): the timed samples' (kept
  // there by both sides until the engine has chosen which to compare) and the
  // re-check's; else through files.
  bool outputs_on_device = false;
};

// Both sides' answers to time_start (docs/worker-protocol.md).
struct PreparedCase {
  Json reference = Json::object(), candidate = Json::object();
  double ms = 0;                         // engine wall time of the preparation
  std::optional<Verification> failure;   // the outcome that ends the verification
};

struct TimedCase {
  TimingRecord record;                   // the timing record (docs/timing.md, "Results")
  double reference_ms = 0, candidate_ms = 0;  // the medians the speedup uses
  std::optional<Verification> failure;   // the outcome that ends the verification
};

// One candidate of a turn: its lane's session and request, its preparation (PrepareCase
// on its own session) and what its timing made (TimeTurn, then RecheckCase).
struct TurnMember {
  DeviceSession* session = nullptr;
  const TimedCaseRequest* request = nullptr;
  PreparedCase prepared{};
  TimedCase timed{};
  DeviceGate::Hold hold{};  // a follower's: the shared hold its re-check runs under, from its leader
};

PreparedCase PrepareCase(DeviceSession& session, const TimedCaseRequest& request);

// The time_start of `request`'s reference side, as PrepareCase sends it (the flush
// and graph settings of its options).
TimeStartRequest ReferenceSideStart(const TimedCaseRequest& request);

// The exclusive part of `leader`'s turn (its request's `turn`: alone, then share): its
// reference side warmed up and timed once, interleaved round by round with its own
// candidate and with those of the members `gather` returns once the turn is had (a
// group turn, engine/turn_group.h; every member prepared for the same task file, case
// and seed). Each member's candidate is timed with every other member's processes
// stopped. Afterwards every member's `timed` holds its record (re-check to come) or
// the failure that ends its verification; a failure of the reference ends them all.
// The members' sessions are used from this thread meanwhile.
void TimeTurn(TurnMember& leader, const std::function<std::vector<TurnMember*>()>& gather = {});

// The re-check of a member TimeTurn timed without failure, on its own session: one
// more call of both sides on the next seed's inputs, compared; then its request's
// turn.done. Sets member.timed.failure when the outputs differ.
void RecheckCase(TurnMember& member);

// The reference's side of `request` timed with no candidate, as a turn would time it:
// made fresh, warmed up, its graph captured where the settings allow one, one round of
// samples (kept on the device when outputs are compared there), then dropped. What the
// engine asks when the reference ran out of memory in a timing beside the candidate's
// worker, once that worker is gone (Verifier::JudgeOutOfMemory). Its failure, judged,
// or nullopt when it fitted.
std::optional<TrustedFailure> TimeReferenceAlone(DeviceSession& session, const TimedCaseRequest& request);

// The device memory the timing of a performance case with `input_bytes` of inputs may
// hold, both workers together, its outputs taken as large as its inputs (docs/timing.md,
// "Memory is shared"): each side's timed inputs, a sample's fresh inputs, its output
// and the one before it, the reference's hand-over buffer; a round's sample outputs
// kept on the device where they are compared there (`outputs_on_device`) and fit; a
// graph's input sets and outputs where one may be captured.
int64_t TimingFootprintBytes(int64_t input_bytes, const EngineOptions& options, bool outputs_on_device);

// One candidate alone: TimeTurn with no other member, then RecheckCase.
// `prepared` must be PrepareCase's answer for the same request, without failure.
TimedCase TimeCase(DeviceSession& session, const TimedCaseRequest& request, PreparedCase prepared);

}  // namespace kvault
