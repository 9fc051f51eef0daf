#include "engine/verifier.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <regex>

#include "cache/eviction.h"
#include "candidate/inline_unit.h"
#include "check/compare.h"
#include "check/tensor_file.h"
#include "engine/output_aliasing.h"
#include "engine/output_check.h"
#include "engine/output_handoff.h"
#include "engine/output_layout.h"
#include "engine/plausibility_recheck.h"
#include "engine/gpu_sensors.h"
#include "engine/held_out_key.h"
#include "engine/fingerprint.h"
#include "engine/inline_record.h"
#include "engine/timed_case.h"
#include "engine/timing_lock.h"
#include "engine/worker_outcome.h"
#include "toolchain/build.h"
#include "util/files.h"
#include "util/sha256.h"
#include "util/strings.h"
#include "worker/protocol.h"

namespace kvault {

namespace field = protocol::field;

namespace {

Verification Outcome(OutcomeStatus s, std::string message) {
  Verification v;
  v.status = s;
  v.message = std::move(message);
  return v;
}

// Replaces v's outcome by `failure`, keeping what v already knows: the build
// record, the per-case records, and that it compiled.
void Settle(Verification& v, Verification failure) {
  failure.build = std::move(v.build);
  failure.records = std::move(v.records);
  // A Triton kernel compiles at its first call: a compile error then undoes "compiled".
  failure.compiled = failure.status != OutcomeStatus::kCompileError && (failure.compiled || v.compiled);
  v = std::move(failure);
}

// The task's tolerance and NaN/Inf policy (unset tolerances: Compare's defaults by dtype).
Tolerance TaskTolerance(const TaskInfo& task) {
  Tolerance tol;
  tol.rtol = task.rtol;
  tol.atol = task.atol;
  tol.nan_policy = task.nan_policy == "forbid" ? Tolerance::NanPolicy::kForbid : Tolerance::NanPolicy::kMatch;
  return tol;
}

// Triton candidates are held to Triton's usual tolerances (rtol 1e-4, atol 1e-3)
// where the task sets none (docs/candidate-formats.md).
TaskInfo WithFormatTolerances(TaskInfo task, CandidateFormat format) {
  if (format == CandidateFormat::kTriton) {
    if (!task.rtol) task.rtol = 1e-4;
    if (!task.atol) task.atol = 1e-3;
  }
  return task;
}

// The source the worker reads a compiled candidate's kernel names from: ASCII only
// (names are identifiers; a JSON string must be valid UTF-8), at most 1 MiB.
std::string KernelNameSource(const std::string& source) {
  std::string text = source.substr(0, size_t{1} << 20);
  for (char& c : text)
    if (static_cast<unsigned char>(c) >= 0x80) c = '?';
  return text;
}

// The name of the options' device in this process's per-device registries ("cuda-0").
std::string DeviceName(const EngineOptions& options) {
  return std::string(ToString(options.backend)) + "-" + std::to_string(options.device_index);
}

// Timing records whose worker had no NVML get the vendor's tool's reading, asked once
// (docs/timing.md, "Clocks").
void AddToolSensors(VerificationRecords& records, Backend backend, int device_index) {
  auto missing = [](const VerificationRecord& rec) {
    const auto* timing = std::get_if<TimingRecord>(&rec);
    return timing && !timing->sensors_after.is_object();
  };
  if (std::none_of(records.begin(), records.end(), missing)) return;
  const Json sensors = QuerySensorsWithTool(backend, device_index);
  for (VerificationRecord& rec : records)
    if (missing(rec)) std::get<TimingRecord>(rec).sensors_after = sensors;
}

}  // namespace

std::vector<int> CorrectnessSeeds(const TaskInfo& task) {
  std::vector<int> seeds;
  for (int s = 1; s <= std::max(3, task.seeds); ++s) seeds.push_back(s);
  return seeds;
}

namespace {

// A lane's own folder under the cache's tmp/, named like verification scratch so a
// killed engine's is swept (cache/eviction.h); nullopt when it cannot be made (the
// lane then uses tmp/ itself, as before lanes had folders).
std::optional<TempDir> MakeLaneDir(const std::string& cache_dir) {
  if (cache_dir.empty()) return std::nullopt;
  auto dir = TempDir::Create(cache_dir + "/tmp", std::string(kVerificationScratchPrefix) + "-lane");
  if (!dir) return std::nullopt;
  return std::move(*dir);
}

EngineOptions InLaneDir(EngineOptions options, const std::optional<TempDir>& lane_dir) {
  if (lane_dir) options.lane_dir = lane_dir->path();
  return options;
}

}  // namespace

Verifier::Verifier(EngineOptions options, WorkerFactory factory)
    : lane_dir_(MakeLaneDir(options.cache_dir)),
      options_(InLaneDir(std::move(options), lane_dir_)),
      session_(options_, options_.compile_only ? "cpu" : std::string(ToString(options_.backend)),
               std::move(factory)),
      references_(options_.cache_dir),
      gate_(DeviceGate::For(DeviceName(options_))),
      member_(gate_->Join()),
      turns_(TurnGroups::For(DeviceName(options_))) {}

template <class Acquire>
auto Verifier::WaitForGate(std::string on, Acquire acquire) {
  const auto t0 = std::chrono::steady_clock::now();
  auto waiting = activity_.Wait(std::move(on));
  auto got = acquire();
  waiting.End();
  clock_.AddGateWait(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return got;
}

DeviceGate::Hold Verifier::UseDevice() {
  if (holding_.held()) return DeviceGate::Hold();
  return WaitForGate("the device gate (shared: another lane has the device to itself)",
                     [&] { return gate_->Share(); });
}

Result<TaskInfo, TrustedFailure> Verifier::Describe(const TaskFile& task) {
  if (auto it = described_.find(task.hash); it != described_.end()) {
    TaskInfo info = it->second;
    info.file = task;  // same content, possibly another path
    return info;
  }
  // The task's inputs are made on the device.
  auto reply =
      CallReference(DescribeRequest{task.path}.ToJson(), "task " + task.name, options_.timeouts.describe);
  if (!reply) return reply.failure();
  auto info = TaskInfoFromDescribe(task, reply->value(field::kTask, Json()));
  if (!info) return TrustedFailure{OutcomeStatus::kTaskError, info.error()};  // e.g. no correctness case
  described_[task.hash] = *info;
  return std::move(*info);
}

bool Verifier::Build(const Candidate& c, Verification& v, std::string* module_path,
                     std::string* module_name, const std::vector<std::string>& extra_flags,
                     const std::vector<std::string>& extra_link_flags) {
  auto hello = session_.Hello();
  if (!hello) {
    Settle(v, Outcome(OutcomeStatus::kInfraError, hello.error()));
    return false;
  }
  auto request = CandidateBuildRequest(c, options_, *hello, extra_flags, extra_link_flags);
  if (!request) {
    Settle(v, Outcome(OutcomeStatus::kInfraError, request.error()));
    return false;
  }
  const BuildRequest& req = *request;
  auto waiting = activity_.Wait(builder_ ? "the compile pool (" + c.path + ")" : "its own build (" + c.path + ")");
  auto built = builder_ ? builder_(req, options_.timeouts.compile) : BuildExtension(req, options_.timeouts.compile);
  waiting.End();
  if (!built) {
    Settle(v, Outcome(OutcomeStatus::kInfraError, "toolchain unavailable: " + built.error()));
    return false;
  }
  v.build = Json{{"toolchain", built->toolchain}, {"command", built->command},
                 {"cache_hit", built->cache_hit}, {"seconds", built->seconds}, {"pch", built->pch},
                 {"lite_ext", built->lite_ext}, {"arch", req.arch}};
  if (!built->lite_ext_note.empty()) v.build["lite_ext_note"] = built->lite_ext_note;
  if (built->lite_verdict) v.build["lite_verdict"] = true;  // the compile error is the lite compile's
  if (built->timed_out) {
    Settle(v, Outcome(OutcomeStatus::kTimeout, "compile ran past its limit of " +
                                             std::to_string(options_.timeouts.compile.count() / 1000) + " s"));
    v.diagnostics = built->diagnostics;
    return false;
  }
  if (!built->ok) {
    Settle(v, Outcome(OutcomeStatus::kCompileError, "the compiler rejected the source"));
    v.diagnostics = built->diagnostics;
    return false;
  }
  v.compiled = true;
  *module_path = built->artifact;
  *module_name = built->module_name;
  return true;
}

std::string Verifier::ReferenceKey(const TaskInfo& task, int case_index, int seed,
                                   const Json& hello, const std::string& distribution) const {
  KeyHasher h;
  h.Add("protocol", std::to_string(protocol::kVersion));
  h.Add("task", task.file.hash);
  h.Add("case", std::to_string(case_index) + ":" + task.cases[case_index].name);
  // Its sizes are drawn from the key: another process's key, other inputs.
  if (task.cases[case_index].name == kHeldOutLargerCase) h.Add("held_out_key", HeldOutKey());
  h.Add("seed", std::to_string(seed));
  if (distribution != kTaskInputs) h.Add("distribution", distribution);
  h.Add("backend", std::string(ToString(options_.backend)));
  AddWorkerSoftware(h, hello);
  return h.Hex();
}

bool Verifier::OutputsOnDevice(const TaskInfo& task, int case_index) {
  if (options_.backend == Backend::kCpu || options_.device_compare_min_bytes < 0) return false;
  if (task.cases[case_index].input_bytes < options_.device_compare_min_bytes) return false;
  auto hello = session_.Hello();
  return hello && hello->value(field::kDeviceHandoff, false);
}

ReferenceReply Verifier::CallReference(const Json& request, const std::string& what,
                                       std::optional<std::chrono::milliseconds> timeout) {
  // Started outside the gate.
  if (auto w = session_.Get(WorkerRole::kReference); !w) return TrustedStartFailure(what, w.error());
  auto use = UseDevice();
  return session_.AskReference(request, timeout.value_or(options_.timeouts.reference), what);
}

bool Verifier::CheckCorrectness(const TaskInfo& task, Verification& v, const std::string& scratch,
                                const std::vector<CorrectnessRun>& runs, std::map<int, ConstantControl>* constants) {
  auto hello = session_.Hello();
  if (!hello) {
    Settle(v, Outcome(OutcomeStatus::kInfraError, hello.error()));
    return false;
  }
  for (int ci : task.CorrectnessCases()) {
    const bool on_device = OutputsOnDevice(task, ci);
    for (const CorrectnessRun& run : runs) {
      const RunPlan plan{task, ci, run, "case " + task.cases[ci].name + " " + RunLabel(run),
                         std::to_string(ci) + "_" + std::to_string(run.seed) + "_" + run.distribution, on_device,
                         scratch, constants ? &(*constants)[ci] : nullptr};
      if (!CheckRun(plan, *hello, v)) return false;
    }
  }
  return true;
}

bool Verifier::RejectDegenerate(const std::map<int, ConstantControl>& constants, Verification& v) {
  if (constants.empty()) return true;
  for (const auto& [ci, control] : constants)
    if (!control.Degenerate()) return true;
  const ConstantControl& first = constants.begin()->second;
  Settle(v, Outcome(OutcomeStatus::kTaskError,
                    "degenerate reference: over every correctness run the reference's outputs are one constant "
                    "within the tolerance, so a constant would pass (" + first.Describe().substr(0, 300) +
                    "); the task cannot tell a kernel from a constant"));
  return false;
}

bool Verifier::CheckRun(const RunPlan& run, const Json& hello, Verification& v) {
  const Verification before = v;
  if (RunSteps(run, hello, v)) return true;
  auto again = [&](Verification& out) { return RunSteps(run, hello, out); };
  // The reference's output made again while the candidate's worker is gone: on the
  // device when its outputs are compared there, else into a file (never the cache's:
  // a cached output says nothing of the memory).
  auto reference_alone = [&](Verification& out) {
    if (run.on_device) {
      RunState state;  // its offer ends with it
      return MakeReference(run, hello, state, out);
    }
    auto reply = AskReferenceRun(run, run.scratch + "/reference_alone_" + run.tag + ".kvt");
    if (!reply) Settle(out, Outcome(reply.failure().status, reply.error()));
    return static_cast<bool>(reply);
  };
  return JudgeOutOfMemory(v, before, run.where, again, reference_alone);
}

bool Verifier::RunSteps(const RunPlan& run, const Json& hello, Verification& v) {
  RunState state;
  const bool ok = MakeReference(run, hello, state, v) && RunCandidate(run, state, v) && CheckInputs(run, state, v) &&
                  CompareRun(run, state, v);
  if (ok && run.constant) WatchReference(run, state);
  // A verdict against a cached reference output that was written while in use (by a
  // worker that can reach the cache) judged nothing: withdrawn, not the kernel's fault.
  if (state.cached && !ReferenceCache::Unchanged(*state.cached)) {
    Settle(v, Outcome(OutcomeStatus::kInfraError, "the cached reference output of " + run.where +
                                                      " was written while it was compared; verify again"));
    return false;
  }
  return ok;
}

void Verifier::WatchReference(const RunPlan& run, const RunState& state) {
  // Outputs compared on the device were never read here (nor kept): no verdict.
  auto file = run.on_device ? Result<TensorFile>(Error{"on the device"}) : TensorFile::Open(state.reference_path);
  if (file) {
    run.constant->Add(*file, TaskTolerance(run.task));
  } else {
    run.constant->Unknown();
  }
}

namespace {

// The reference worker runs only task code and says out of memory as a task error.
bool ReferenceOutOfMemory(const Verification& v) { return ReferenceRanOutOfMemory(v.status, v.message); }

bool OutOfMemory(const Verification& v) {
  return v.status == OutcomeStatus::kOom || ReferenceOutOfMemory(v);
}

// The device's memory as the worker's hello reports it; 0 on the CPU, or unknown.
int64_t DeviceMemoryBytes(const Result<Json>& hello) {
  const Json device = hello ? hello->value(field::kDevice, Json::object()) : Json::object();
  return device.is_object() ? device.value(field::kMemoryBytes, int64_t{0}) : 0;
}

// The bytes a PyTorch out-of-memory message says were asked for ("Tried to allocate
// 8.00 GiB"); nullopt when it says none.
std::optional<double> AskedBytes(const std::string& message) {
  // The candidate's process words the message: only the few characters after the
  // phrase are matched (util/strings.h, kMostRegexChars).
  constexpr std::string_view kPhrase = "Tried to allocate ";
  const size_t at = message.find(kPhrase);
  if (at == std::string::npos) return std::nullopt;
  const std::string asked = message.substr(at, kPhrase.size() + 64);
  static const std::regex kAsked(R"(Tried to allocate ([0-9.]+) (GiB|MiB|KiB|B)\b)");
  std::smatch m;
  if (!std::regex_search(asked, m, kAsked)) return std::nullopt;
  const double scale = m[2] == "GiB" ? 1073741824.0 : m[2] == "MiB" ? 1048576.0 : m[2] == "KiB" ? 1024.0 : 1.0;
  return std::strtod(m[1].str().c_str(), nullptr) * scale;
}

}  // namespace

bool Verifier::OthersMayHoldTheMemory(const Verification& v) {
  // Only a GPU's memory is held by the other lanes' workers (the CPU backend's limits
  // are each worker's own). An ask larger than the whole device is the candidate's or
  // the task's, whoever else is there (forging one gains nothing: it is a verdict).
  if (options_.backend == Backend::kCpu || gate_->members() <= 1) return false;
  const int64_t memory = DeviceMemoryBytes(session_.Hello());
  const auto asked = AskedBytes(v.message);
  return !(asked && memory > 0 && *asked > static_cast<double>(memory));
}

bool Verifier::JudgeOutOfMemory(Verification& v, const Verification& before, const std::string& where,
                                const std::function<bool(Verification&)>& again,
                                const std::function<bool(Verification&)>& reference_alone) {
  if (!OutOfMemory(v) || holding_.held()) return false;  // already alone: the verdict stands
  const auto drain = std::chrono::milliseconds(options_.timing.drain_ms);
  // 1. The device to itself: other lanes' device work drained and held back.
  Verification base = before;
  base.records.push_back(AloneAfterOomRecord{where, v.message.substr(0, 400)});
  v = base;
  {
    auto waiting = activity_.Wait("the device gate (exclusive: " + where + " runs again alone after out of memory)");
    holding_ = gate_->Exclude(drain);
  }
  bool ok = again(v);
  // 2. Its memory to itself: no other verification's inputs, outputs or candidate
  // worker on the device (their leases end with their verifications), none started
  // meanwhile. Nothing is held while waiting, so the others can end.
  if (!ok && OutOfMemory(v) && OthersMayHoldTheMemory(v)) {
    const std::string second = v.message;
    const int others = gate_->members() - 1;
    EndTurn();
    const bool whole = WaitForGate(
        "the whole-memory lease (" + where + " out of memory beside " + std::to_string(others) + " other lane(s))",
        [&] { return gate_->LeaseWhole(memory_, options_.timeouts.time); });
    if (!whole) {
      Settle(v, Outcome(OutcomeStatus::kInfraError,
                        where + " ran out of device memory beside " + std::to_string(others) +
                            " other lane(s), whose verifications did not give the device's memory up within " +
                            std::to_string(options_.timeouts.time.count() / 1000) +
                            " s to run it again alone: not judged; verify again: " + second.substr(0, 300)));
      return false;
    }
    base.records.push_back(AloneAfterOomRecord{where, second.substr(0, 400), /*whole_memory=*/true});
    v = base;
    {
      auto excluding = activity_.Wait("the device gate (exclusive: " + where + " runs again with the whole memory)");
      holding_ = gate_->Exclude(drain);
    }
    ok = again(v);
  }
  // 3. The reference out of memory beside the candidate's worker, which may hold what
  // it lacked: asked again without that worker (the verification ends either way).
  if (!ok && ReferenceOutOfMemory(v) && candidate_loaded_ && reference_alone) {
    session_.Discard(WorkerRole::kCandidate);
    candidate_loaded_ = false;
    Verification alone = base;
    if (reference_alone(alone))
      Settle(v, Outcome(OutcomeStatus::kOom,
                        where + ": the reference ran out of device memory while the candidate's worker lived, "
                                "and fitted once it was gone: the candidate's memory (" +
                            v.message.substr(0, 300) + ")"));
  }
  EndTurn();
  memory_.Narrow();
  return ok;
}

CorrectnessRecord Verifier::RunPlan::Record() const {
  CorrectnessRecord r;
  r.case_name = task.cases[case_index].name;
  r.seed = run.seed;
  r.distribution = run.distribution;
  return r;
}

ReferenceReply Verifier::AskReferenceRun(const RunPlan& run, const std::string& out, const Json& handoff) {
  const ReferenceRequest request{run.task.file.path, run.case_index, run.run.seed, run.run.distribution, out,
                                 handoff};
  return CallReference(request.ToJson(), "reference " + run.where);
}

bool Verifier::MakeReference(const RunPlan& run, const Json& hello, RunState& state, Verification& v) {
  if (run.on_device) {
    // Not cached: outputs of several GB are made again on the device, not read back.
    state.handoff = NewHandoff(session_.CandidateFolder(run.scratch), 2);
    state.reference_path = run.scratch + "/reference_" + run.tag + ".kvt";
    auto reply = AskReferenceRun(run, state.reference_path, state.handoff.ToJson());
    if (!reply) {
      Settle(v, Outcome(reply.failure().status, reply.error()));
      return false;
    }
    state.reference_digest = ReplyString(*reply, field::kInputDigest, "");
    if (const Json h = reply->value(field::kHandoff, Json()); h.is_object())
      state.offer = DeviceOffer([this](const Json& request) { return CallReference(request, "the reference"); },
                                h.value(field::kOutputLayout, Json()));
    return true;
  }
  // Unset when the cache failed (its lock, files or record): the engine's.
  std::optional<TrustedFailure> reference_failed;
  auto make = [&](const std::string& out) -> Result<std::string> {
    auto reply = AskReferenceRun(run, out);
    if (!reply) {
      reference_failed = reply.failure();
      return Error{reply.error()};
    }
    return ReplyString(*reply, field::kInputDigest, "");
  };
  auto ref = references_.GetOrCompute(
      ReferenceKey(run.task, run.case_index, run.run.seed, hello, run.run.distribution), make);
  if (!ref) {
    Settle(v, Outcome(reference_failed ? reference_failed->status : OutcomeStatus::kInfraError, ref.error()));
    return false;
  }
  state.reference_path = ref->output_path;
  state.reference_digest = ref->input_digest;
  state.cached = *ref;
  return true;
}

bool Verifier::RunCandidate(const RunPlan& run, RunState& state, Verification& v) {
  Json layout = state.offer.layout();  // the reference output's shapes and dtypes
  if (!state.offer.open()) {
    if (auto file = TensorFile::Open(state.reference_path)) layout = OutputLayout(*file);
  }
  auto w = session_.Get(WorkerRole::kCandidate);
  if (!w) {
    Settle(v, Outcome(OutcomeStatus::kInfraError, w.error()));
    return false;
  }
  const std::string folder = session_.CandidateFolder(run.scratch);
  state.out = folder + "/out_" + run.tag + ".kvt";
  state.repeat_out = folder + "/repeat_" + run.tag + ".kvt";
  // defer_writes: the worker writes the output files once this lane's hold of the
  // device has ended (write_outputs below), so a timing waits only for device work.
  RunRequest request{.case_index = run.case_index, .seed = run.run.seed, .distribution = run.run.distribution,
                     .out = state.out, .repeat_out = state.repeat_out, .defer_writes = true};
  // Shapes and dtypes only (native candidates get their outputs allocated).
  request.output_layout = layout;
  if (state.offer.open()) request.handoff = state.handoff.Delivery();
  auto use = UseDevice();
  WorkerReply r = (*w)->Call(request.ToJson(), options_.timeouts.run);
  use.Release();
  if (ReplyOk(r) && r.response.value(field::kDeferred, Json()) == true) {
    WorkerReply written = (*w)->Call(WriteOutputsRequest{}.ToJson(), options_.timeouts.run);
    if (!ReplyOk(written)) r = std::move(written);
  }
  if (!ReplyOk(r)) {
    Settle(v, CandidateFailure(r, "run " + run.where, options_.timeouts.run, (*w)->TakeLog()));
    return false;
  }
  state.reply = std::move(r.response);
  return true;
}

bool Verifier::CheckInputs(const RunPlan& run, RunState& state, Verification& v) {
  // Candidate code can forge its worker's digest (docs/threat-model.md): the
  // reference worker makes the inputs again and decides whose the difference is.
  auto make_again = [&]() -> Result<std::string, TrustedFailure> {
    auto reply = AskReferenceRun(run, run.scratch + "/digest_check.kvt");
    if (!reply) return reply.failure();
    return ReplyString(*reply, field::kInputDigest, "");
  };
  const std::string digest = ReplyString(state.reply, field::kInputDigest, "");
  if (auto fault = InputDigestVerdict(state.reference_digest, digest, make_again)) {
    Settle(v, Outcome(fault->status, run.where + ": " + fault->message));
    return false;
  }
  CorrectnessRecord record = run.Record();
  const Json modified = state.reply.value(field::kInputsModified, Json());
  if (modified.is_array() && !modified.empty()) {
    v.status = OutcomeStatus::kMismatch;
    v.message = run.where + ": the candidate modified its input(s) " + modified.dump();
    record.status = CorrectnessRecord::Status::kInputsModified;
    v.records.push_back(record);
    return false;
  }
  // An output sharing memory with an input passes only where the reference's does.
  auto reference_again = [&] { return AskReferenceRun(run, run.scratch + "/aliases.kvt"); };
  if (auto failure = AliasingFailure(state.reply, run.where, reference_again)) {
    record.status = CorrectnessRecord::Status::kOutputAliasesInput;
    v.records.push_back(record);
    Settle(v, std::move(*failure));
    return false;
  }
  return true;
}

bool Verifier::CompareRun(const RunPlan& run, RunState& state, Verification& v) {
  // The output of the checked call and of the repeated call on fresh copies of
  // the same inputs (docs/adversarial.md): both must match the reference.
  static constexpr const char* kCalls[2] = {"first", "repeat"};
  const OutputFiles files{state.reference_path, {state.out, state.repeat_out}, /*remove_reference=*/run.on_device,
                          run.scratch + "/handoff_" + run.tag};
  Tolerance tolerance = TaskTolerance(run.task);
  // Inputs the engine redrew (signed, heavy_tailed) cancel where the task's may not: the
  // absolute tolerance follows the output's scale there (check/compare.h).
  tolerance.atol_by_rms = run.run.distribution != kTaskInputs;
  ComparedOutputs got = CompareOutputs(state.offer, state.reply, files, tolerance);
  if (got.failure) {
    Settle(v, Outcome(got.failure->status, run.where + ": " + got.failure->message));
    return false;
  }
  for (size_t k = 0; k < got.calls.size() && k < 2; ++k) {
    const CompareReport& cmp = got.calls[k];
    CorrectnessRecord rec = run.Record();
    rec.status = cmp.match ? CorrectnessRecord::Status::kOk : CorrectnessRecord::Status::kMismatch;
    rec.comparison = CorrectnessRecord::Comparison{
        .call = kCalls[k],
        .max_abs_error = cmp.max_abs_error,
        .max_rel_error = cmp.max_rel_error,
        .mismatched = cmp.mismatched,
        .compared = cmp.compared,
        .compared_on = !run.on_device ? "" : got.on_device ? "device" : "host",
        .message = cmp.match ? "" : cmp.message,
        .worst_path = cmp.match ? "" : cmp.worst_path,
        .worst_index = cmp.match ? std::vector<int64_t>{} : cmp.worst_index};
    v.records.push_back(std::move(rec));
    if (!cmp.match) {
      v.status = OutcomeStatus::kMismatch;
      v.message = run.where + (k == 1 ? " (repeated call)" : "") + ": " + cmp.message;
      return false;
    }
  }
  return true;
}

TimedCaseRequest Verifier::TimingRequest(const TaskInfo& task, int case_index, const std::string& scratch) {
  TimedCaseRequest req{task, case_index, kTimingSeed, options_, scratch, TaskTolerance(task), -1, {}};
  req.turn.alone = [this]() -> Result<TurnStart> {
    EndTurn();  // a shared hold cannot wait for itself to drain
    const auto t0 = std::chrono::steady_clock::now();
    auto waiting = activity_.Wait("the device's timing lock (another lane or kvault process times)");
    auto queued = gate_->Queue();  // until the exclusive hold: an ending timer hands on to this one
    auto lock = TimingLock::Acquire(options_);
    waiting.End();
    clock_.AddLockWait(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (!lock) return Error{lock.error()};
    timing_lock_ = std::move(*lock);
    TurnStart start;
    start.warmup_ms = timing_lock_->WarmupMs(options_.timing);
    auto excluding = activity_.Wait("the device gate (exclusive: other lanes' runs drain before timing)");
    holding_ = gate_->Exclude(std::chrono::milliseconds(options_.timing.drain_ms));
    start.device_quiet = holding_.drained();
    return start;
  };
  req.turn.share = [this] {
    holding_.Downgrade();  // the re-check's hold, at once; the device to the next timer or the runs
    GiveBackLock();  // the next lane's turn begins while this one re-checks
  };
  req.turn.done = [this] { holding_.Release(); };
  req.outputs_on_device = OutputsOnDevice(task, case_index);
  return req;
}

bool Verifier::Timed(const TaskInfo& task) const {
  return !options_.skip_timing && !task.PerformanceCases().empty();
}

std::optional<PreparedCase> Verifier::PrepareTiming(const TaskInfo& task, Verification& v,
                                                    const std::string& scratch) {
  if (!Timed(task)) return std::nullopt;
  return Prepare(TimingRequest(task, task.PerformanceCases()[0], scratch), v);
}

std::optional<PreparedCase> Verifier::Prepare(const TimedCaseRequest& req, Verification& v) {
  const Verification before = v;
  PreparedCase prepared;
  {
    auto hold = UseDevice();  // like a correctness run: not while another lane times
    prepared = PrepareCase(session_, req);
  }
  if (prepared.failure) {
    Settle(v, std::move(*prepared.failure));
    auto again = [&](Verification& out) {
      prepared = PrepareCase(session_, req);
      if (prepared.failure) Settle(out, std::move(*prepared.failure));
      return !prepared.failure;
    };
    // The reference's side made again, then dropped (its time_finish).
    auto reference_alone = [&](Verification& out) {
      TimeStartRequest start = ReferenceSideStart(req);
      start.fresh = true;
      auto started = CallReference(start.ToJson(), "the reference");
      if (!started) {
        Settle(out, Outcome(started.failure().status, started.error()));
        return false;
      }
      (void)CallReference(TimeFinishRequest{}.ToJson(), "the reference");
      return true;
    };
    if (!JudgeOutOfMemory(v, before, "timing preparation", again, reference_alone)) return std::nullopt;
  }
  return prepared;
}

std::string Verifier::TurnKey(const TimedCaseRequest& req) const {
  // Candidates share a turn when their timings are the same measurement of the same
  // reference: task text, case, seed, tolerance and where outputs are compared.
  const Tolerance& tol = req.tolerance;
  Json key{req.task.file.hash, req.case_index, req.seed, tol.rtol.value_or(-1), tol.atol.value_or(-1),
           static_cast<int>(tol.nan_policy), req.outputs_on_device};
  return key.dump();
}

void Verifier::TimeInTurn(TurnMember& me, Turn turn) {
  EndTurn();  // nothing held while waiting: the leader drains the device
  if (turn == Turn::kAlone) {
    TimeTurn(me);
    RecheckCase(me);
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto waiting = activity_.Wait("its group turn (timed with other lanes' candidates of the task)");
  auto lead = turns_->Join(TurnKey(*me.request), &me, options_.timing.group_max);
  waiting.End();
  if (!lead) {  // a leader timed this candidate in its turn
    clock_.AddLockWait(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (me.timed.failure) return;
    holding_ = me.hold.held() ? std::move(me.hold) : UseDevice();
    RecheckCase(me);
    return;
  }
  std::vector<TurnMember*> followers;
  TimeTurn(me, [&] { return followers = lead->Close(); });
  for (TurnMember* f : followers)
    if (!f->timed.failure) f->hold = holding_.Also();  // they re-check beside this lane
  lead->Finish();
  RecheckCase(me);
}

void Verifier::GiveBackLock() {
  if (timing_lock_) timing_lock_->GiveBack();
  timing_lock_.reset();
}

void Verifier::EndTurn() {
  holding_.Release();
  GiveBackLock();
}

void Verifier::Time(const TaskInfo& task, Verification& v, const std::string& scratch,
                    std::optional<PreparedCase> first) {
  if (!Timed(task)) return;
  std::vector<int> perf = task.PerformanceCases();
  TimedSums sums;
  for (int ci : perf) {
    const TimedCaseRequest req = TimingRequest(task, ci, scratch);
    std::optional<PreparedCase> prepared = ci == perf[0] && first ? std::move(first) : Prepare(req, v);
    if (!prepared) return;  // v holds the preparation's outcome
    if (!TimeCase(req, std::move(*prepared), v, sums)) return;
  }
  if (options_.backend != Backend::kCpu) AddToolSensors(v.records, options_.backend, options_.device_index);
  v.reference_ms = sums.reference_ms;
  v.candidate_ms = sums.candidate_ms;
  if (sums.candidate_ms > 0 && std::isfinite(sums.reference_ms / sums.candidate_ms))
    v.speedup = sums.reference_ms / sums.candidate_ms;
}

bool Verifier::TimeCase(const TimedCaseRequest& req, PreparedCase prepared, Verification& v, TimedSums& sums) {
  const Verification before = v;
  if (TimeOnce(req, std::move(prepared), v, sums, Turn::kGrouped)) return true;
  // Again in a turn of its own: neither prepared beside other lanes' candidates nor
  // timed with them (their memory is what the judgement keeps out).
  auto again = [&](Verification& out) {
    std::optional<PreparedCase> fresh = Prepare(req, out);
    return fresh && TimeOnce(req, std::move(*fresh), out, sums, Turn::kAlone);
  };
  // The reference's side timed again, then dropped (its time_finish).
  auto reference_alone = [&](Verification& out) {
    if (std::optional<TrustedFailure> failed = TimeReferenceAlone(session_, req)) {
      Settle(out, Outcome(failed->status, failed->message));
      return false;
    }
    return true;
  };
  const std::string where = "timing case " + req.task.cases[req.case_index].name;
  const bool timed = JudgeOutOfMemory(v, before, where, again, reference_alone);
  if (!timed && v.status == OutcomeStatus::kOom) BeyondTheDevice(req, where, v);
  return timed;
}

// Both sides of a timing live at once, each with its inputs and outputs
// (TimingFootprintBytes). Where that is more than the device can lease to one lane, the
// candidate's side running out with the device to itself says nothing of the
// candidate: whichever side allocated last met the reference side's memory.
void Verifier::BeyondTheDevice(const TimedCaseRequest& req, const std::string& where, Verification& v) {
  const int64_t memory = DeviceMemoryBytes(session_.Hello());
  if (memory <= 0) return;
  const int64_t needs =
      TimingFootprintBytes(req.task.cases[req.case_index].input_bytes, options_, req.outputs_on_device);
  const int64_t can = DeviceGate::LeasableBytes(memory, 1);
  if (needs <= can) return;  // it fits: out of memory there is the candidate's
  Settle(v, Outcome(OutcomeStatus::kInfraError,
                    where + " needs about " + FormatBytes(needs) + " of device memory for both sides of its timing, more "
                            "than the " + FormatBytes(can) + " this device can give one verification: the candidate's "
                            "side running out of memory there is not judged (" + v.message.substr(0, 300) + ")"));
}

bool Verifier::TimeOnce(const TimedCaseRequest& req, PreparedCase prepared, Verification& v, TimedSums& sums,
                        Turn turn) {
  TurnMember me{&session_, &req, std::move(prepared)};
  TimeInTurn(me, turn);
  EndTurn();  // also when the turn ended early
  TimedCase& timed = me.timed;
  if (timed.failure) {
    Settle(v, std::move(*timed.failure));
    return false;
  }
  sums.reference_ms += timed.reference_ms;
  sums.candidate_ms += timed.candidate_ms;
  v.records.push_back(std::move(timed.record));
  return true;
}

Verification Verifier::Finish(Verification v) {
  // A compile-only check judged nothing a reward is for (no run, no comparison).
  // Unsupported: this engine's backend cannot run the candidate, which says nothing of it.
  if (IsInfrastructure(v.status) || v.status == OutcomeStatus::kUnsupported || options_.compile_only) {
    v.reward.reset();
    return v;
  }
  RewardInput in;
  in.status = ToString(v.status);
  in.compiled = v.compiled;
  in.correct = v.status == OutcomeStatus::kPassed;
  in.speedup = v.speedup;
  in.speedup_implausible = StillImplausible(v.records);  // the re-check's record says why
  v.correct = in.correct;
  v.reward = TurnReward(options_.reward, in);
  return v;
}

bool Verifier::CheckFormat(Attempt& a) {
  std::string why = BackendMismatch(a.candidate, options_.backend);
  // A runtime the worker's Python lacks (Triton), as its first hello said: the
  // machine's limit, before the candidate worker could say it (and be disbelieved).
  if (why.empty() && a.candidate.format == CandidateFormat::kTriton)
    if (auto hello = session_.Hello(); hello) why = MissingRuntime(a.candidate, *hello);
  if (why.empty()) return true;
  a.v = Outcome(OutcomeStatus::kUnsupported, why);
  return false;
}

void Verifier::CompileOnly(Attempt& a) {
  if (CallsLoadInline(a.candidate)) {  // noted in a device-less worker, each call compiled
    if (!BuildInlineModules(a)) return;
    a.v.status = OutcomeStatus::kCompiled;
    a.v.compiled = true;
    a.v.message = "compiled " + std::to_string(a.inline_modules.size()) + " load_inline call(s) for " +
                  a.v.build.value("arch", std::string("the host"));
    return;
  }
  if (!a.compiled_format) {
    a.v = Outcome(OutcomeStatus::kCompiled, "Python candidates are built when loaded; nothing to compile");
    a.v.compiled = true;
    return;
  }
  if (!Build(a.candidate, a.v, &a.module_path, &a.module_name)) return;
  a.v.status = OutcomeStatus::kCompiled;
  a.v.message = "compiled for " + a.v.build.value("arch", std::string("the host"));
}

void Verifier::BindReferenceWorker(const TaskFile& task) {
  if (options_.reference_workers != ReferenceWorkers::kPerTask) return;
  // A worker that only answered hello has run no task's code: the first task keeps it.
  if (!reference_task_.empty() && reference_task_ != task.hash) {
    session_.Discard(WorkerRole::kReference);  // its kept side goes with it
  }
  reference_task_ = task.hash;
}

Result<std::string> Verifier::PolicyFor(const TaskFile& task) {
  if (options_.policy != kPolicyTask) return options_.policy;
  if (auto hello = session_.Hello(); !hello) return Error{hello.error()};
  BindReferenceWorker(task);
  auto info = Describe(task);
  if (!info) return Error{info.error()};
  return AppliedPolicy(options_.policy, info->policy);
}

bool Verifier::DescribeTask(Attempt& a) {
  // A reference worker that cannot start (or speaks another protocol) is not the task's fault.
  if (auto hello = session_.Hello(); !hello) {
    a.v = Outcome(OutcomeStatus::kInfraError, hello.error());
    return false;
  }
  auto info = Describe(a.task);
  if (!info) {
    // The task's inputs are made on the device: beside other lanes they may not fit.
    const Verification before = a.v;
    Settle(a.v, Outcome(info.failure().status, info.error()));
    auto again = [&](Verification& out) {
      info = Describe(a.task);
      if (!info) Settle(out, Outcome(info.failure().status, info.error()));
      return static_cast<bool>(info);
    };
    if (!JudgeOutOfMemory(a.v, before, "describe", again)) return false;
  }
  a.policy = AppliedPolicy(options_.policy, info->policy);
  a.checked = WithFormatTolerances(*info, a.candidate.format);
  if (options_.rtol) a.checked->rtol = options_.rtol;
  if (options_.atol) a.checked->atol = options_.atol;
  a.v.held_out = info->held_out;  // which held-out cases run, and why not (docs/adversarial.md)
  a.info = std::move(*info);
  clock_.Lap(Phase::kDescribe);
  session_.Prestart();  // the candidate's worker starts while the candidate builds
  // ReferenceWorkers::kPerTask on a GPU: the next task's reference worker starts now,
  // while this attempt builds, runs and times, instead of at its end, where the next
  // describe waited for its whole start (PyTorch's import: 15-22 s an attempt on an
  // H100 host in corpus verify). On the cpu backend it still starts after this
  // attempt's timing (Verify's end): an import beside CPU timing is noise in its samples.
  if (options_.reference_workers == ReferenceWorkers::kPerTask && options_.backend != Backend::kCpu)
    session_.PrestartReference();
  return true;
}

bool Verifier::BuildCandidate(Attempt& a) {
  if (a.compiled_format && !Build(a.candidate, a.v, &a.module_path, &a.module_name)) return false;
  clock_.Lap(Phase::kBuild);
  return true;
}

// A KernelBench file's load_inline calls (docs/toolchains.md, "load_inline
// candidates"): noted by a worker that is then discarded, each built through the
// compile cache like an extension-format source, the builds handed to its load. A
// call the engine does not build is left to PyTorch's own load_inline (the record
// says why); a build the compiler rejects is the candidate's compile_error.
bool Verifier::BuildInlineModules(Attempt& a) {
  if (!CallsLoadInline(a.candidate)) return true;
  activity_.Enter(Phase::kRecordInline);
  std::optional<NotedInlineCalls> record = NoteInlineCalls(a);
  clock_.Lap(Phase::kRecordInline);
  activity_.Enter(Phase::kBuild);
  if (!record) return false;  // a.v says why
  const Json& calls = record->calls;
  const std::string& construct_failed = record->construct_failed;
  // A call that builds CUDA where the backend cannot: the answer's own compile error,
  // decided by what the file passed when it ran (never by its text: a comment or
  // dead code naming CUDA says nothing), and counted like any other (docs/outcomes.md).
  for (const Json& call : calls) {
    if (!CallBuildsCuda(call)) continue;
    if (std::string why = BackendMismatch("cuda", options_.backend); why.empty()) continue;
    a.v.compiled = false;
    Settle(a.v, Outcome(OutcomeStatus::kCompileError,
                        ForeignLanguageVerdict("cuda", options_.backend, "a load_inline call with cuda_sources")));
    if (!a.v.build.is_object()) a.v.build = Json::object();
    a.v.build[kForeignLanguageKey] = "cuda";
    return false;
  }
  // A flag off its compiler's allow-list is no build's to pass, not even PyTorch's in
  // the worker: the candidate's compile error, named (toolchain/candidate_flags.h).
  for (const Json& call : calls) {
    if (std::string refused = RefusedInlineFlag(call); !refused.empty()) {
      a.v.compiled = false;
      Settle(a.v, Outcome(OutcomeStatus::kCompileError, "load_inline " + refused));
      return false;
    }
  }
  // The record's build object lists every call: built, or why not.
  Json notes = Json::array();
  auto noted = [&](bool ok) {
    if (!notes.empty() || !construct_failed.empty()) {
      if (!a.v.build.is_object()) a.v.build = Json::object();
      if (!notes.empty()) a.v.build["inline"] = notes;
      // Its calls are then left to PyTorch; the run says what that code does.
      if (!construct_failed.empty()) a.v.build["inline_construct_failed"] = construct_failed;
    }
    return ok;
  };
  for (size_t i = 0; i < calls.size(); ++i) {
    const Json& call = calls[i];
    const std::string digest = call.is_object() && call.contains(field::kDigest) && call[field::kDigest].is_string()
                                   ? call[field::kDigest].get<std::string>() : "";
    auto unit = BuildableInlineUnit(call, options_.backend);
    if (!unit) {
      notes.push_back(Json{{"digest", digest}, {"built", false}, {"note", unit.error()}});
      continue;
    }
    if (!CreateScratch(a)) return false;
    Candidate unit_source = InlineUnitSource(*unit, a.scratch->path(), i);
    if (Status s = WriteFileAtomic(unit_source.path, unit_source.source); !s) {
      a.v = Outcome(OutcomeStatus::kInfraError, "cannot write a load_inline source: " + s.error());
      return false;
    }
    std::string path, module;
    const bool built = Build(unit_source, a.v, &path, &module, unit->extra_flags, unit->extra_link_flags);
    Json note{{"digest", unit->digest}, {"built", built}, {"lite_ext", a.v.build.is_object() && a.v.build.value("lite_ext", false)}};
    if (a.v.build.is_object() && a.v.build.value("lite_verdict", false)) note["lite_verdict"] = true;
    // Why this unit did not take the lite way: the build object keeps the last unit's.
    if (!note["lite_ext"].get<bool>() && a.v.build.is_object() && a.v.build.contains("lite_ext_note"))
      note["lite_ext_note"] = a.v.build["lite_ext_note"];
    notes.push_back(std::move(note));
    if (!built) return noted(false);  // a.v holds the compile error, timeout or infra_error
    a.inline_modules.push_back(Json{{field::kDigest, unit->digest}, {field::kPath, path}, {field::kModule, module}});
  }
  noted(true);
  clock_.Lap(Phase::kBuild);
  return true;
}

// The file's load_inline calls: those noted of the same bytes before (InlineCallsKey),
// else noted by a worker that is then discarded. nullopt when the file's own code
// crashed or hung (its load would too: a.v holds that) or no worker could note them.
std::optional<NotedInlineCalls> Verifier::NoteInlineCalls(Attempt& a) {
  auto hello = session_.Hello();
  const std::string key = hello && !a.candidate.hash.empty() && !a.task.hash.empty()
                              ? InlineCallsKey(a.candidate.hash, a.task.hash, *hello)
                              : "";
  if (!key.empty())
    if (auto kept = LookupInlineCalls(options_.cache_dir, key)) return kept;
  auto w = session_.Get(WorkerRole::kCandidate);
  if (!w) {
    a.v = Outcome(OutcomeStatus::kInfraError, w.error());
    return std::nullopt;
  }
  // Candidate code before the verification's memory lease: a stage of another lane
  // run with the device's memory to itself waits for it, and it for such a stage.
  DeviceGate::MemoryLease noting =
      WaitForGate("the device's memory (another lane's whole-memory lease)", [&] { return gate_->Attend(); });
  // The constructor's pass runs code that runs per run when loaded, so its crash or
  // hang here is not the load's: the runs say what it does.
  InlineRecord record = RecordInlineCalls(**w, a.candidate.path, a.task.path, options_.timeouts.load);
  const WorkerReply& r = record.file;
  const std::string log = ReplyOk(r) ? "" : (*w)->TakeLog();
  NotedInlineCalls noted{record.calls, ""};
  if (record.constructed && !ReplyOk(*record.constructed))
    noted.construct_failed =
        CandidateFailure(*record.constructed, "record_inline", options_.timeouts.load, "").message;
  // Nothing the file did while it was noted may reach the worker that loads it.
  session_.Discard(WorkerRole::kCandidate);
  noting.Release();  // its memory gone with its worker
  session_.Prestart();
  if (!ReplyOk(r)) {  // the file's own code crashed or hung: it does so when loaded too
    a.v.compiled = true;
    Settle(a.v, CandidateFailure(r, "load", options_.timeouts.load, log));
    return std::nullopt;
  }
  if (!noted.calls.is_array()) {
    a.v = Outcome(OutcomeStatus::kInfraError, "the worker's record_inline reply has no calls");
    return std::nullopt;
  }
  if (!key.empty()) KeepInlineCalls(options_.cache_dir, key, noted);
  return noted;
}

bool Verifier::CreateScratch(Attempt& a) {
  if (a.scratch) return true;
  const std::string parent = options_.lane_dir.empty() ? options_.cache_dir + "/tmp" : options_.lane_dir;
  if (!std::filesystem::exists(parent)) {
    // Swept while the lane sat idle (cache clean, after kStaleScratchAge): made again,
    // and the workers that had it mounted replaced.
    if (auto st = EnsureDir(parent); !st) {
      a.v = Outcome(OutcomeStatus::kInfraError, "no lane folder: " + st.error());
      return false;
    }
    session_.Discard(WorkerRole::kCandidate);
    session_.Discard(WorkerRole::kReference);
  }
  auto scratch = TempDir::Create(parent, kVerificationScratchPrefix);
  if (!scratch) {
    a.v = Outcome(OutcomeStatus::kInfraError, "no scratch folder: " + scratch.error());
    return false;
  }
  a.scratch = std::move(*scratch);
  return true;
}

namespace {

// Device memory one verification's correctness runs hold, per byte of its largest
// correctness case's inputs: the reference worker's inputs and output, the candidate
// worker's inputs, its checked and repeated calls' outputs. Measured footprints of
// KernelBench's current tasks on an H100 (inputs of 4 to 16 GB; six lanes exhausted
// 80 GB) put it near this; an estimate, not a bound. Its timing's is
// TimingFootprintBytes (engine/timed_case.h); the lease is the larger.
constexpr int64_t kFootprintPerInputByte = 6;

}  // namespace

bool Verifier::LeaseDeviceMemory(Attempt& a) {
  const int64_t memory = DeviceMemoryBytes(session_.Hello());
  if (memory <= 0 || !a.checked) return true;  // the CPU, or a worker that does not say
  int64_t bytes = 0;
  for (int ci : a.checked->CorrectnessCases())
    bytes = std::max(bytes, a.checked->cases[ci].input_bytes * kFootprintPerInputByte);
  if (Timed(*a.checked))
    for (int ci : a.checked->PerformanceCases())
      bytes = std::max(bytes, TimingFootprintBytes(a.checked->cases[ci].input_bytes, options_,
                                                   OutputsOnDevice(*a.checked, ci)));
  memory_.Release();
  const int64_t budget = DeviceGate::LeasableBytes(memory, gate_->members());
  memory_ = WaitForGate("a device memory lease of " + FormatBytes(bytes) + " (" +
                            FormatBytes(gate_->leased_bytes()) + " of " + FormatBytes(budget) + " leased" +
                            (gate_->whole_waiting() > 0 ? ", a whole-memory lease waiting" : "") + ")",
                        [&] { return gate_->LeaseMemory(bytes, budget); });
  clock_.Lap(Phase::kMemoryWait);  // not the worker's start: the next stage
  return true;
}

bool Verifier::StartCandidateWorker(Attempt& a) {
  if (!CreateScratch(a)) return false;
  auto w = session_.Get(WorkerRole::kCandidate);
  if (!w) {
    a.v = Outcome(OutcomeStatus::kInfraError, w.error());
    return false;
  }
  a.worker = *w;
  clock_.Lap(Phase::kWorkerStart);
  return true;
}

bool Verifier::LoadCandidate(Attempt& a) {
  LoadRequest load{a.task.path, std::string(ToString(a.candidate.format)),
                   a.compiled_format ? a.module_path : a.candidate.path};
  if (a.candidate.format == CandidateFormat::kExtension) load.module = a.module_name;
  load.inline_modules = a.inline_modules;
  if (a.compiled_format) load.source = KernelNameSource(a.candidate.source);  // docs/adversarial.md, "Policy"
  load.policy = a.policy;
  a.load = load.ToJson();
  candidate_loaded_ = true;  // its code runs from here on
  WorkerReply r = a.worker->Call(a.load, options_.timeouts.load);
  a.v.compiled = true;
  clock_.Lap(Phase::kLoad);
  if (ReplyOk(r)) return true;
  Settle(a.v, CandidateFailure(r, "load", options_.timeouts.load, a.worker->TakeLog()));
  return false;
}

bool Verifier::CheckAllCorrectness(Attempt& a) {
  std::map<int, ConstantControl> constants;
  const bool correct = CheckCorrectness(*a.checked, a.v, a.scratch->path(), CorrectnessRuns(*a.checked),
                                        options_.reject_degenerate ? &constants : nullptr);
  clock_.Lap(Phase::kCorrectness);
  if (!correct || !RejectDegenerate(constants, a.v)) return false;
  a.v.status = OutcomeStatus::kPassed;
  a.v.message = "all " + std::to_string(a.info->CorrectnessCases().size()) + " correctness case(s) x " +
                std::to_string(CorrectnessSeeds(*a.info).size()) + " seeds match";
  if (!a.info->input_distributions.empty())
    a.v.message +=
        ", also on " + std::to_string(a.info->input_distributions.size()) + " other input distribution(s)";
  return true;
}

bool Verifier::TimeCandidate(Attempt& a) {
  if (Timed(*a.checked)) Announce(Phase::kTiming);
  // The first performance case's sides build, make their inputs and make their
  // first calls beside other lanes' work.
  activity_.Enter(Phase::kTimingPrepare);
  std::optional<PreparedCase> prepared = PrepareTiming(*a.checked, a.v, a.scratch->path());
  clock_.Lap(Phase::kTimingPrepare);
  if (a.v.status != OutcomeStatus::kPassed) return false;  // the preparation failed: v holds its outcome
  // Each case's turn: the device's lock and the gate to itself for the warm-up and
  // rounds, other lanes' runs and the next lane's turn beside its re-check.
  activity_.Enter(Phase::kTiming);
  Time(*a.checked, a.v, a.scratch->path(), std::move(prepared));
  clock_.Lap(Phase::kTiming);
  return a.v.status == OutcomeStatus::kPassed;
}

bool Verifier::RecheckSpeedup(Attempt& a) {
  const bool plausible = RecheckImplausible(*a.checked, a.v, a.scratch->path(), a.load);
  clock_.Lap(Phase::kRecheck);
  return plausible;
}

void Verifier::Announce(Phase stage) {
  activity_.Enter(stage);
  if (stage_listener_) stage_listener_(ToString(stage).data());  // a literal: NUL-terminated
}

// Past CheckFormat, `unsupported` is only ever a worker's claim, and the candidate's
// worker runs candidate code, which can forge its replies (docs/threat-model.md): a
// failing candidate would escape its record (no reward) and pass@k. Only the native
// format has limits of its own for that worker to tell (the dtypes and ranks of its
// ABI); any other format's claim counts against the candidate, as a claim that blames
// the task or the engine does.
void Verifier::DisownUnsupportedClaim(Attempt& a) {
  if (a.v.status != OutcomeStatus::kUnsupported || a.candidate.format == CandidateFormat::kNative) return;
  a.v.status = OutcomeStatus::kCrash;
  a.v.message = "the candidate's worker answered 'unsupported' (" + a.v.message +
                "); candidate code runs in that worker and can forge such answers, so it counts against the candidate";
}

Verification Verifier::Done(Attempt& a) {
  Verification v = Finish(std::move(a.v));
  v.policy = a.policy;
  v.seconds = clock_.Elapsed();
  v.phases = clock_.Phases();  // CasesJson writes them last among the records, for the store
  return v;
}

// The cascade (verifier.h), one stage after another; each stage ends the
// verification with its outcome when it fails.
Verification Verifier::Verify(const TaskFile& task, const Candidate& candidate) {
  clock_.Start();
  Attempt a{task, candidate};
  a.compiled_format = IsCompiledFormat(candidate.format);
  auto stage = [this](Phase name) {
    Announce(name);
    return true;
  };
  if (!CheckFormat(a)) return Done(a);
  BindReferenceWorker(task);
  if (options_.compile_only) {
    stage(Phase::kBuild);
    CompileOnly(a);
    clock_.Lap(Phase::kBuild);  // where a compile-only check spent its time, as a full one says
    DisownUnsupportedClaim(a);
    return Done(a);
  }
  if (stage(Phase::kDescribe) && DescribeTask(a) && stage(Phase::kBuild) && BuildCandidate(a) && BuildInlineModules(a) &&
      LeaseDeviceMemory(a) && stage(Phase::kWorkerStart) && StartCandidateWorker(a) && stage(Phase::kLoad) &&
      LoadCandidate(a) &&
      stage(Phase::kCorrectness) && CheckAllCorrectness(a) && TimeCandidate(a))
    RecheckSpeedup(a);  // each announces its stage only when it has work to do
  EndTurn();
  // Every candidate gets a fresh worker: one that passed may still have patched the
  // process (PyTorch, the harness) to help the next one, and one that failed may
  // have poisoned it (CUDA context, heap). The zygote makes a fresh one cheap.
  session_.Discard(WorkerRole::kCandidate);
  candidate_loaded_ = false;
  memory_.Release();  // after its worker is gone: a whole lease's waiters find its memory free
  // The next task's reference worker starts now if it has not yet (the cpu backend, or
  // the one started after describe became this task's), so that a lane's turn to
  // another task waits for it as little as it can.
  if (options_.reference_workers == ReferenceWorkers::kPerTask) session_.PrestartReference();
  DisownUnsupportedClaim(a);
  return Done(a);
}

}  // namespace kvault
