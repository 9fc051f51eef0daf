#include "engine/output_handoff.h"

#include <atomic>
#include <filesystem>
#include <random>

#include "check/dtype.h"
#include "check/tensor_file.h"
#include "engine/output_check.h"
#include "worker/protocol.h"

namespace kvault {
namespace {

std::string RandomHex(int bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::random_device rd;  // the kernel's entropy source on Linux
  std::string out;
  for (int i = 0; i < bytes; ++i) {
    const unsigned v = rd() & 0xFFu;
    out += kDigits[v >> 4];
    out += kDigits[v & 0xF];
  }
  return out;
}

double NumberOr(const Json& obj, const char* key, double fallback) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_number() ? it->get<double>() : fallback;
}

}  // namespace

namespace field = protocol::field;

Json HandoffSpec::ToJson() const {
  return Json{{field::kSocket, socket}, {field::kSecret, secret}, {field::kSets, sets}};
}

Json HandoffSpec::Delivery() const { return Json{{field::kSocket, socket}, {field::kSecret, secret}}; }

HandoffSpec NewHandoff(const std::string& scratch, int sets) {
  static std::atomic<unsigned> counter{0};
  HandoffSpec spec;
  spec.socket = scratch + "/h" + std::to_string(counter.fetch_add(1)) + ".sock";
  spec.secret = RandomHex(16);
  spec.sets = sets;
  return spec;
}

Result<Json> HandoffTolerances(const Json& layout, const Tolerance& tolerance) {
  const Json* tensors = layout.is_object() && layout.contains("tensors") ? &layout["tensors"] : nullptr;
  if (tensors == nullptr || !tensors->is_array()) return Error{"the offered output_layout lists no tensors"};
  Json rules = Json::array();
  for (const Json& t : *tensors) {
    const std::string name = t.is_object() ? t.value("dtype", std::string()) : std::string();
    auto dtype = DTypeFromName(name);
    if (!dtype) return Error{"the offered output_layout has an unknown dtype '" + name + "'"};
    ResolvedTolerance r = ResolveTolerance(tolerance, *dtype);
    rules.push_back(Json{{field::kRtol, r.rtol}, {field::kAtol, r.atol},
                         {field::kForbid, tolerance.nan_policy == Tolerance::NanPolicy::kForbid},
                         {field::kAtolByRms, tolerance.atol_by_rms}});
  }
  return rules;
}

DeviceOffer::DeviceOffer(DeviceOffer&& other) noexcept
    : call_(std::move(other.call_)), layout_(std::move(other.layout_)), open_(other.open_) {
  other.open_ = false;
}

DeviceOffer& DeviceOffer::operator=(DeviceOffer&& other) noexcept {
  if (this != &other) {
    Release();
    call_ = std::move(other.call_);
    layout_ = std::move(other.layout_);
    open_ = other.open_;
    other.open_ = false;
  }
  return *this;
}

void DeviceOffer::Release() {
  if (!open_) return;
  open_ = false;
  (void)call_(HandoffReleaseRequest{}.ToJson());
}

std::optional<TrustedFailure> DeviceOffer::WriteTo(const std::string& out) {
  open_ = false;
  auto reply = call_(HandoffReleaseRequest{out}.ToJson());
  if (!reply) return reply.failure();
  return std::nullopt;
}

Result<HandoffComparison> DeviceOffer::Compare(const Tolerance& tolerance, const std::string& stem, int sets) {
  open_ = false;  // handoff_compare ends the offer, whatever it answers
  auto rules = HandoffTolerances(layout_, tolerance);
  if (!rules) {
    open_ = true;  // not sent: released when this object goes
    return Error{rules.error()};
  }
  const std::string ref_out = stem + "_reference.kvt", cand_out = stem + "_candidate.kvt";
  auto reply = call_(HandoffCompareRequest{*rules, ref_out, cand_out}.ToJson());
  if (!reply) return Error{reply.error()};
  HandoffComparison result;
  result.served = reply->value(field::kServed, false);
  const Json calls = reply->value(field::kCalls, Json::array());
  if (!calls.is_array()) return Error{"handoff_compare answered without 'calls'"};
  for (const Json& c : calls) {
    if (!c.is_object()) return Error{"handoff_compare answered a malformed call"};
    CompareReport report;
    if (c.value(field::kMatch, false)) {
      report.match = true;
      report.compared = static_cast<int64_t>(NumberOr(c, field::kCompared, 0));
      report.max_abs_error = NumberOr(c, field::kMaxAbs, 0);
      report.max_rel_error = NumberOr(c, field::kMaxRel, 0);
      report.message = MatchSummary(report.compared, report.max_abs_error, report.max_rel_error);
    } else {
      // The engine's Compare is the rule; the device found a difference worth its words.
      auto ref = TensorFile::Open(ref_out);
      auto cand = ref ? TensorFile::Open(cand_out, CandidateOutputLimit(ref->file_bytes()))
                      : Result<TensorFile>(Error{"no reference"});
      if (!ref || !cand)
        return Error{"the outputs of a call that differs on the device are unreadable: " +
                     (ref ? cand.error() : ref.error())};
      report = kvault::Compare(*ref, *cand, tolerance);
      if (report.match)  // a borderline element the two rules see apart: never pass on it
        return Error{"the device found a difference that the engine's comparison does not (" +
                     report.message + ")"};
    }
    result.calls.push_back(std::move(report));
    if (!result.calls.back().match) break;
  }
  std::error_code ignored;
  std::filesystem::remove(ref_out, ignored);
  std::filesystem::remove(cand_out, ignored);
  const bool complete = !result.calls.empty() &&
                        (!result.calls.back().match || static_cast<int>(result.calls.size()) == sets);
  if (result.served && !complete)
    return Error{"the device comparison covered " + std::to_string(result.calls.size()) + " of " +
                 std::to_string(sets) + " calls"};
  return result;
}

}  // namespace kvault
