#pragma once
// The worker protocol's names, shared by every engine file that speaks it
// (docs/worker-protocol.md is the definition; python/kvault_worker the other side).
// Ops and field names are spelled here once; the requests the engine sends are typed
// structs whose ToJson() is the line that goes to the worker. Reading a reply stays
// with the caller (worker replies are untrusted: engine/worker_outcome.h), through
// the field names below. python/tests/test_protocol_schema.py checks that the worker
// lists the same ops, error kinds, version and fields.
//
//   RunRequest run{.case_index = 0, .seed = 1, .out = "/abs/out.kvt"};
//   WorkerReply r = worker->Call(run.ToJson(), timeout);
//   std::string digest = ReplyString(r.response, protocol::field::kInputDigest, "");
//
//   if (Status st = CheckHello(hello_reply); !st) ...   // another protocol version
#include <string>

#include "util/json.h"
#include "util/result.h"

namespace kvault {
namespace protocol {

// The protocol version this engine speaks. A worker's `hello` must report the same
// (python/kvault_worker/__init__.py, PROTOCOL_VERSION). A change to a request or a
// reply that a peer of the old version would misread or silently ignore raises both.
inline constexpr int kVersion = 9;

// Requests' `op` (docs/worker-protocol.md, "Requests").
namespace op {
inline constexpr char kHello[] = "hello";
inline constexpr char kDescribe[] = "describe";
inline constexpr char kReference[] = "reference";
inline constexpr char kLoad[] = "load";
inline constexpr char kRecordInline[] = "record_inline";
inline constexpr char kRun[] = "run";
inline constexpr char kWriteOutputs[] = "write_outputs";
inline constexpr char kTimeStart[] = "time_start";
inline constexpr char kTimeWarmup[] = "time_warmup";
inline constexpr char kTimeGraph[] = "time_graph";
inline constexpr char kTimeFlush[] = "time_flush";
inline constexpr char kTimeSample[] = "time_sample";
inline constexpr char kTimeBurst[] = "time_burst";
inline constexpr char kTimeOutput[] = "time_output";
inline constexpr char kTimeFinish[] = "time_finish";
inline constexpr char kHandoffCompare[] = "handoff_compare";
inline constexpr char kHandoffRelease[] = "handoff_release";
inline constexpr char kUnload[] = "unload";
inline constexpr char kShutdown[] = "shutdown";
// The zygote's one request (docs/worker-protocol.md, "Zygote"; its own socket).
inline constexpr char kFork[] = "fork";
}  // namespace op

// Field names of requests and replies.
namespace field {
// Every request and reply.
inline constexpr char kOp[] = "op";
inline constexpr char kId[] = "id";
inline constexpr char kOk[] = "ok";
inline constexpr char kKind[] = "kind";
inline constexpr char kMessage[] = "message";
inline constexpr char kTraceback[] = "traceback";
// hello
inline constexpr char kBackend[] = "backend";
inline constexpr char kDeviceIndex[] = "device_index";
inline constexpr char kEnvironment[] = "environment";
inline constexpr char kHeldOutKey[] = "held_out_key";  // the larger held-out case's sizes are drawn from it
inline constexpr char kProtocol[] = "protocol";
inline constexpr char kDevice[] = "device";  // {name, arch, ...}
inline constexpr char kArch[] = "arch";      // within device
inline constexpr char kMemoryBytes[] = "memory_bytes";  // within device: the GPU's memory (0 on the CPU)
inline constexpr char kName[] = "name";      // within device
inline constexpr char kTorch[] = "torch";
inline constexpr char kTorchCuda[] = "torch_cuda";
inline constexpr char kTorchHip[] = "torch_hip";
inline constexpr char kTriton[] = "triton";  // Triton's version, null where the worker's Python has none
inline constexpr char kPython[] = "python";
inline constexpr char kExecutable[] = "executable";  // the worker's Python interpreter
inline constexpr char kWorkerSource[] = "worker_source";
inline constexpr char kDeviceHandoff[] = "device_handoff";
inline constexpr char kAvailableBackends[] = "available_backends";
inline constexpr char kUnavailableReasons[] = "unavailable_reasons";
// describe, reference, load, run
inline constexpr char kTask[] = "task";
inline constexpr char kCase[] = "case";
inline constexpr char kSeed[] = "seed";
inline constexpr char kDistribution[] = "distribution";
inline constexpr char kOut[] = "out";
inline constexpr char kRepeatOut[] = "repeat_out";
inline constexpr char kCandidate[] = "candidate";  // load: {format, path, module}
inline constexpr char kFormat[] = "format";
inline constexpr char kPath[] = "path";
inline constexpr char kModule[] = "module";
inline constexpr char kSource[] = "source";  // load: the compiled candidate's source
inline constexpr char kPolicy[] = "policy";  // load: the custom-kernel policy applied
inline constexpr char kInline[] = "inline";  // load (kernelbench): [{digest, path, module}]
// record_inline: kCalls (below: the load_inline calls noted), and why the file stopped early
inline constexpr char kStopped[] = "stopped";
inline constexpr char kDigest[] = "digest";
inline constexpr char kOutputLayout[] = "output_layout";
inline constexpr char kDeferWrites[] = "defer_writes";
inline constexpr char kDeferred[] = "deferred";
inline constexpr char kInputDigest[] = "input_digest";
inline constexpr char kInputsModified[] = "inputs_modified";
// time_start, time_warmup, time_graph, time_flush, time_sample, time_burst, time_output,
// time_finish
inline constexpr char kSide[] = "side";
inline constexpr char kFlush[] = "flush";
inline constexpr char kGraphBelowMs[] = "graph_below_ms";
inline constexpr char kFresh[] = "fresh";
inline constexpr char kKept[] = "kept";
inline constexpr char kFlushBytes[] = "flush_bytes";
inline constexpr char kWarmupMs[] = "warmup_ms";
inline constexpr char kCallMs[] = "call_ms";
inline constexpr char kDeviceCallMs[] = "device_call_ms";
inline constexpr char kSensors[] = "sensors";
inline constexpr char kMethod[] = "method";
inline constexpr char kMs[] = "ms";
inline constexpr char kWallMs[] = "wall_ms";
inline constexpr char kCallOthersMs[] = "call_others_ms";
inline constexpr char kCall[] = "call";
inline constexpr char kOutputAliases[] = "output_aliases";
inline constexpr char kGraphMaxCalls[] = "graph_max_calls";
inline constexpr char kGraphCalls[] = "graph_calls";
inline constexpr char kReplays[] = "replays";
inline constexpr char kGraphFailed[] = "graph_failed";
inline constexpr char kKeep[] = "keep";
inline constexpr char kKeepAs[] = "keep_as";
inline constexpr char kSample[] = "sample";
// Outputs on the device (docs/device-compare.md)
inline constexpr char kHandoff[] = "handoff";
inline constexpr char kSocket[] = "socket";
inline constexpr char kSecret[] = "secret";
inline constexpr char kSets[] = "sets";
inline constexpr char kTolerances[] = "tolerances";  // [{rtol, atol, forbid}]
inline constexpr char kRtol[] = "rtol";
inline constexpr char kAtol[] = "atol";
inline constexpr char kForbid[] = "forbid";
inline constexpr char kAtolByRms[] = "atol_by_rms";
inline constexpr char kOutReference[] = "out_reference";
inline constexpr char kOutCandidate[] = "out_candidate";
inline constexpr char kServed[] = "served";
inline constexpr char kCalls[] = "calls";
inline constexpr char kMatch[] = "match";
inline constexpr char kCompared[] = "compared";
inline constexpr char kMaxAbs[] = "max_abs";
inline constexpr char kMaxRel[] = "max_rel";
// The zygote's messages (docs/worker-protocol.md, "Zygote")
inline constexpr char kReady[] = "ready";
inline constexpr char kPidNamespace[] = "pid_namespace";
inline constexpr char kPid[] = "pid";
inline constexpr char kFolder[] = "folder";  // fork: the worker's own folder
inline constexpr char kError[] = "error";
}  // namespace field

// A failed reply's `kind` (docs/worker-protocol.md, "Error kinds").
namespace kind {
inline constexpr char kTaskError[] = "task_error";
inline constexpr char kLoadError[] = "load_error";
inline constexpr char kUnsupported[] = "unsupported";
inline constexpr char kCompileError[] = "compile_error";
inline constexpr char kRuntimeError[] = "runtime_error";
inline constexpr char kOom[] = "oom";
inline constexpr char kMismatch[] = "mismatch";
inline constexpr char kPolicyViolation[] = "policy_violation";
inline constexpr char kBadRequest[] = "bad_request";
inline constexpr char kInternal[] = "internal";
}  // namespace kind

// Values of some fields.
inline constexpr char kSideReference[] = "reference";  // time_start side
inline constexpr char kSideCandidate[] = "candidate";
inline constexpr char kDistributionTask[] = "task";       // the task's own get_inputs
inline constexpr char kHandoffDelivered[] = "delivered";  // run / time_finish handoff
inline constexpr char kTimerEvents[] = "cuda_events";     // time_sample method
inline constexpr char kTimerGraph[] = "cuda_graph";
inline constexpr char kTimerClock[] = "monotonic_clock";

}  // namespace protocol

// The requests the engine sends. Optional fields are left out of ToJson() when
// unset (an empty string, a null Json, false), so the worker applies its defaults.

struct HelloRequest {
  std::string backend{};  // "cpu", "cuda" or "hip"
  int device_index = 0;
  bool environment = true;  // build paths and backend probe (about a second)
  std::string held_out_key{};  // the engine's held-out key (engine/held_out_key.h)
  Json ToJson() const;
};

struct DescribeRequest {
  std::string task{};  // absolute path of the task file
  Json ToJson() const;
};

struct ReferenceRequest {
  std::string task{};
  int case_index = 0;
  int seed = 1;
  std::string distribution = protocol::kDistributionTask;
  std::string out{};  // where the output goes (unless it stays on the device)
  Json handoff{};     // HandoffSpec::ToJson(): offer the output on the device
  Json ToJson() const;
};

struct LoadRequest {
  std::string task{};
  std::string format{};  // candidate format ("extension", "native", ...)
  std::string path{};    // the source, or the built module
  std::string module{};  // extension format: the module's name
  std::string source{};  // compiled formats: the source text (its own kernels' names)
  std::string policy{};  // the custom-kernel policy the engine applies; empty: the task's
  Json inline_modules{};  // kernelbench: [{digest, path, module}] built for its load_inline calls
  Json ToJson() const;
};

// The load_inline calls a KernelBench file makes (docs/worker-protocol.md, "record_inline").
struct RecordInlineRequest {
  std::string path{};  // the candidate file
  std::string task{};  // its task file: ModelNew is constructed too; empty: not
  Json ToJson() const;
};

struct RunRequest {
  int case_index = 0;
  int seed = 1;
  std::string distribution = protocol::kDistributionTask;
  std::string out{};
  std::string repeat_out{};   // the repeated call's output; empty: no repeated call
  bool defer_writes = false;  // files written at write_outputs
  Json output_layout{};       // the reference output's shapes and dtypes
  Json handoff{};             // {socket, secret}: deliver into the reference's offer
  Json ToJson() const;
};

struct WriteOutputsRequest {
  Json ToJson() const;
};

struct TimeStartRequest {
  std::string side{};  // protocol::kSideReference or kSideCandidate
  std::string task{};  // reference side only
  int case_index = 0;
  int seed = 0;
  bool flush = true;
  double graph_below_ms = 0;
  Json output_layout{};  // candidate side (native format)
  bool fresh = false;    // reference side: not a side kept from an earlier timing
  Json ToJson() const;
};

struct TimeWarmupRequest {
  int warmup_ms = 100;
  Json ToJson() const;
};

struct TimeGraphRequest {
  int calls = 0;  // the graph's calls; 0: the side sizes it itself
  Json ToJson() const;
};

struct TimeFlushRequest {
  Json ToJson() const;
};

struct TimeSampleRequest {
  std::string method = protocol::kTimerClock;
  int64_t seed = 0;      // the inputs of this sample
  int64_t call = -1;     // graphs: the call whose output goes to `out`; < 0: none sent
  std::string out{};     // where the sample's output goes; empty: nowhere
  int keep_as = -1;      // >= 0: the output is kept on the device as this sample of the round
  Json ToJson() const;
};

// `replays` runs of the side's timed unit back to back (graph replays with the graph
// method, else calls) on the inputs as they are: the engine clocks the request.
struct TimeBurstRequest {
  std::string method = protocol::kTimerClock;
  int replays = 1;
  Json ToJson() const;
};

// The output kept as sample `sample` (TimeSampleRequest::keep_as) handed over: with
// `handoff`, offered (reference) or delivered (candidate) as time_finish does; else,
// or when declined, written to `out`.
struct TimeOutputRequest {
  int sample = 0;
  std::string out{};
  Json handoff{};        // reference: HandoffSpec::ToJson(); candidate: {socket, secret}
  Json output_layout{};  // candidate side with handoff
  bool keep = false;     // reference side: the sample stays kept (the next candidate of a group turn)
  Json ToJson() const;
};

struct TimeFinishRequest {
  std::string out{};     // the output of one more call; empty: none
  bool keep = false;     // reference side: keep the timed side
  Json handoff{};        // reference: HandoffSpec::ToJson(); candidate: {socket, secret}
  Json output_layout{};  // candidate side with handoff
  Json ToJson() const;
};

struct HandoffCompareRequest {
  Json tolerances{};  // one {rtol, atol, forbid} per output tensor
  std::string out_reference{}, out_candidate{};
  Json ToJson() const;
};

struct HandoffReleaseRequest {
  std::string out{};  // the offered output written here; empty: dropped
  Json ToJson() const;
};

// Whether a successful `hello` reply speaks protocol::kVersion. Error (one line,
// naming both versions) otherwise: the engine then treats the worker as unusable,
// an infrastructure failure, not the candidate's or the task's.
Status CheckHello(const Json& reply);

}  // namespace kvault
