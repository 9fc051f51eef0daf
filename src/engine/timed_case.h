#pragma once
// Times one performance case of a verification (docs/timing.md): the reference in
// the reference worker, the candidate in the candidate worker, same device, same
// inputs (each worker makes them on the device from the timing seed), interleaved
// by rounds the engine drives, stopped by the StoppingRule; then the outputs of the
// last timed calls are compared here.
//
//   TimedCase t = TimeCase(session, {task, case_index, kTimingSeed, options, scratch, tol, -1, true});
//   if (t.failure) return *t.failure;   // the verification ends with this outcome
//   v.cases.push_back(t.row);
// Not thread-safe (uses the lane's DeviceSession).
#include <optional>
#include <string>

#include "check/compare.h"
#include "engine/device_session.h"
#include "engine/options.h"
#include "engine/verification.h"
#include "task/task_file.h"

namespace kvault {

struct TimedCaseRequest {
  const TaskInfo& task;
  int case_index = 0;
  int seed = 0;
  const EngineOptions& options;
  std::string scratch;  // folder for the two output files of the re-check
  Tolerance tolerance;
  int warmup_ms = -1;   // each side's warm-up; < 0: options.timing.warmup_ms
  bool device_quiet = true;  // no other lane's work was on the device (DeviceGate)
  // The re-check's outputs compared on the device (engine/output_handoff.h).
  bool outputs_on_device = false;
};

struct TimedCase {
  Json row = Json::object();             // the timing record (docs/timing.md, "Results")
  double reference_ms = 0, candidate_ms = 0;  // the medians the speedup uses
  std::optional<Verification> failure;   // the outcome that ends the verification
};

TimedCase TimeCase(DeviceSession& session, const TimedCaseRequest& request);

}  // namespace kvault
