#include "worker/protocol.h"

namespace kvault {

using protocol::kVersion;
namespace field = protocol::field;
namespace op = protocol::op;

namespace {

// `j[key] = value` unless the value is unset (so the worker's default applies).
void SetIf(Json& j, const char* key, const std::string& value) {
  if (!value.empty()) j[key] = value;
}
void SetIf(Json& j, const char* key, const Json& value) {
  if (!value.is_null()) j[key] = value;
}

}  // namespace

Json HelloRequest::ToJson() const {
  Json j{{field::kOp, op::kHello},
         {field::kBackend, backend},
         {field::kDeviceIndex, device_index},
         {field::kEnvironment, environment}};
  SetIf(j, field::kHeldOutKey, held_out_key);
  return j;
}

Json DescribeRequest::ToJson() const {
  return Json{{field::kOp, op::kDescribe}, {field::kTask, task}};
}

Json ReferenceRequest::ToJson() const {
  Json j{{field::kOp, op::kReference},         {field::kTask, task},
         {field::kCase, case_index},           {field::kSeed, seed},
         {field::kDistribution, distribution}, {field::kOut, out}};
  SetIf(j, field::kHandoff, handoff);
  return j;
}

Json LoadRequest::ToJson() const {
  Json candidate{{field::kFormat, format}, {field::kPath, path}};
  SetIf(candidate, field::kModule, module);
  SetIf(candidate, field::kSource, source);
  if (inline_modules.is_array() && !inline_modules.empty()) candidate[field::kInline] = inline_modules;
  Json j{{field::kOp, op::kLoad}, {field::kTask, task}, {field::kCandidate, candidate}};
  SetIf(j, field::kPolicy, policy);
  return j;
}

Json RecordInlineRequest::ToJson() const {
  Json j{{field::kOp, op::kRecordInline},
         {field::kCandidate, Json{{field::kFormat, "kernelbench"}, {field::kPath, path}}}};
  SetIf(j, field::kTask, task);
  return j;
}

Json RunRequest::ToJson() const {
  Json j{{field::kOp, op::kRun},
         {field::kCase, case_index},
         {field::kSeed, seed},
         {field::kOut, out},
         {field::kDistribution, distribution}};
  SetIf(j, field::kRepeatOut, repeat_out);
  if (defer_writes) j[field::kDeferWrites] = true;
  if (output_layout.is_object()) j[field::kOutputLayout] = output_layout;
  SetIf(j, field::kHandoff, handoff);
  return j;
}

Json WriteOutputsRequest::ToJson() const {
  return Json{{field::kOp, op::kWriteOutputs}};
}

Json TimeStartRequest::ToJson() const {
  Json j{{field::kOp, op::kTimeStart}, {field::kSide, side},   {field::kCase, case_index},
         {field::kSeed, seed},         {field::kFlush, flush}, {field::kGraphBelowMs, graph_below_ms}};
  SetIf(j, field::kTask, task);
  if (output_layout.is_object()) j[field::kOutputLayout] = output_layout;
  if (fresh) j[field::kFresh] = true;
  return j;
}

Json TimeWarmupRequest::ToJson() const {
  return Json{{field::kOp, op::kTimeWarmup}, {field::kWarmupMs, warmup_ms}};
}

Json TimeGraphRequest::ToJson() const {
  Json j{{field::kOp, op::kTimeGraph}};
  if (calls > 0) j[field::kCalls] = calls;
  return j;
}

Json TimeFlushRequest::ToJson() const { return Json{{field::kOp, op::kTimeFlush}}; }

Json TimeSampleRequest::ToJson() const {
  Json j{{field::kOp, op::kTimeSample}, {field::kMethod, method}, {field::kSeed, seed}};
  if (call >= 0) j[field::kCall] = call;
  SetIf(j, field::kOut, out);
  if (keep_as >= 0) j[field::kKeepAs] = keep_as;
  return j;
}

Json TimeBurstRequest::ToJson() const {
  return Json{{field::kOp, op::kTimeBurst}, {field::kMethod, method}, {field::kReplays, replays}};
}

Json TimeOutputRequest::ToJson() const {
  Json j{{field::kOp, op::kTimeOutput}, {field::kSample, sample}, {field::kOut, out}};
  SetIf(j, field::kHandoff, handoff);
  if (output_layout.is_object()) j[field::kOutputLayout] = output_layout;
  if (keep) j[field::kKeep] = true;
  return j;
}

Json TimeFinishRequest::ToJson() const {
  Json j{{field::kOp, op::kTimeFinish}};
  SetIf(j, field::kOut, out);
  if (keep) j[field::kKeep] = true;
  SetIf(j, field::kHandoff, handoff);
  if (output_layout.is_object()) j[field::kOutputLayout] = output_layout;
  return j;
}

Json HandoffCompareRequest::ToJson() const {
  return Json{{field::kOp, op::kHandoffCompare},
              {field::kTolerances, tolerances},
              {field::kOutReference, out_reference},
              {field::kOutCandidate, out_candidate}};
}

Json HandoffReleaseRequest::ToJson() const {
  Json j{{field::kOp, op::kHandoffRelease}};
  SetIf(j, field::kOut, out);
  return j;
}

Status CheckHello(const Json& reply) {
  const std::string engine = std::to_string(kVersion);
  auto it = reply.is_object() ? reply.find(field::kProtocol) : reply.end();
  if (!reply.is_object() || it == reply.end() || !it->is_number_integer())
    return Error{"the worker's hello names no protocol version (this engine speaks version " + engine +
                 "): engine and worker come from different versions of KernelVault"};
  const auto version = it->get<long long>();
  if (version != kVersion)
    return Error{"the worker speaks protocol version " + std::to_string(version) + ", this engine version " +
                 engine + " (python/kvault_worker and the kvault binary come from different versions)"};
  return Status::Ok();
}

}  // namespace kvault
