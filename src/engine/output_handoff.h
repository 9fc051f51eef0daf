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
//   DeviceOffer offer(call_reference, layout);
//   candidate run["handoff"] = spec.Delivery();      // reply: handoff "delivered"
//   auto got = offer.Compare(tolerance, scratch + "/h1", 2);
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "check/compare.h"
#include "engine/worker_outcome.h"
#include "util/json.h"
#include "util/result.h"

namespace kvault {

struct HandoffSpec {
  std::string socket;  // a Unix socket in the verification's scratch folder
  std::string secret;  // what the candidate's worker presents to be served
  int sets = 1;        // buffer sets: one per candidate call compared
  // The reference worker's `handoff` (reference, time_finish): make the offer.
  Json ToJson() const;
  // The candidate's worker's `handoff` (run, time_finish): deliver into it.
  Json Delivery() const;
};

// A fresh socket name under `scratch` and a random secret.
HandoffSpec NewHandoff(const std::string& scratch, int sets);

// The handoff_compare request's `tolerances`: one {rtol, atol, forbid} per tensor
// of `layout` (an output_layout), resolved as Compare resolves them.
Result<Json> HandoffTolerances(const Json& layout, const Tolerance& tolerance);

// A request to the reference worker: its reply, or its failure judged
// (DeviceSession::AskReference).
using ReferenceCall = std::function<ReferenceReply(const Json& request)>;

struct HandoffComparison {
  // False when the candidate's worker said it delivered but never took the
  // buffers: its reply was forged.
  bool served = true;
  // One report per compared call, in call order, up to the first that does not match.
  std::vector<CompareReport> calls;
};

// A reference output the reference worker offered on the device (its reply to
// `reference` or `time_finish` with `handoff`). The offer ends on every way out:
// compared, written to a file, or else released when this object goes.
class DeviceOffer {
 public:
  DeviceOffer() = default;  // nothing offered
  DeviceOffer(ReferenceCall call, Json layout) : call_(std::move(call)), layout_(std::move(layout)), open_(true) {}
  DeviceOffer(DeviceOffer&& other) noexcept;
  DeviceOffer& operator=(DeviceOffer&& other) noexcept;
  DeviceOffer(const DeviceOffer&) = delete;
  DeviceOffer& operator=(const DeviceOffer&) = delete;
  ~DeviceOffer() { Release(); }

  bool open() const { return open_; }
  const Json& layout() const { return layout_; }  // the offered output_layout

  // The candidate's worker delivered `sets` calls: handoff_compare. A call that does
  // not match is compared again here from the files the reference worker wrote under
  // `stem` (the exact wording and index). Error also when the device's answer
  // covers fewer calls than it should.
  Result<HandoffComparison> Compare(const Tolerance& tolerance, const std::string& stem, int sets);
  // The candidate's worker wrote files: the reference output is written to `out`.
  // nullopt once written, else the reference call's failure.
  std::optional<TrustedFailure> WriteTo(const std::string& out);

 private:
  void Release();  // handoff_release, failures ignored (the worker is replaced then)

  ReferenceCall call_;
  Json layout_;
  bool open_ = false;
};

}  // namespace kvault
