#pragma once
// Outputs compared on the device (docs/device-compare.md): for cases with inputs of
// at least EngineOptions::device_compare_min_bytes on a GPU, the reference worker
// keeps its output on the device and offers buffers like it; the candidate's worker
// copies its outputs into them; the reference worker compares there and reports.
// No output of several GB crosses the host. A call that does not match is written
// to files by the reference worker and worded by the engine's Compare, as always.
//
//   HandoffSpec spec = NewHandoff(scratch, 2);
//   reference request["handoff"] = spec.ToJson();    // reply: handoff.output_layout
//   candidate run["handoff"] = spec.ToJson();        // reply: handoff "delivered"
//   auto got = CompareOnDevice(call_reference, layout, tolerance, scratch + "/h1");
#include <functional>
#include <string>
#include <vector>

#include "check/compare.h"
#include "util/json.h"
#include "util/result.h"

namespace kvault {

struct HandoffSpec {
  std::string socket;  // a Unix socket in the verification's scratch folder
  std::string secret;  // what the candidate's worker presents to be served
  int sets = 1;        // buffer sets: one per candidate call compared
  Json ToJson() const { return Json{{"socket", socket}, {"secret", secret}, {"sets", sets}}; }
};

// A fresh socket name under `scratch` and a random secret.
HandoffSpec NewHandoff(const std::string& scratch, int sets);

// The handoff_compare request's `tolerances`: one {rtol, atol, forbid} per tensor
// of `layout` (an output_layout), resolved as Compare resolves them.
Result<Json> HandoffTolerances(const Json& layout, const Tolerance& tolerance);

// A request to the reference worker: its reply, or why it failed (already settled
// by the caller's worker handling).
using ReferenceCall = std::function<Result<Json>(const Json& request)>;

struct HandoffComparison {
  // False when the candidate's worker said it delivered but never took the
  // buffers: its reply was forged.
  bool served = true;
  // One report per compared call, in call order, up to the first that does not match.
  std::vector<CompareReport> calls;
};

// Sends handoff_compare; a call that does not match is compared again here from
// the files the reference worker wrote under `stem` (the exact wording and index).
Result<HandoffComparison> CompareOnDevice(const ReferenceCall& call, const Json& layout,
                                          const Tolerance& tolerance, const std::string& stem);

// Ends an offer that will not be compared; with `out`, the reference output is
// written there first (then compared from files).
Status ReleaseHandoff(const ReferenceCall& call, const std::string& out = "");

}  // namespace kvault
