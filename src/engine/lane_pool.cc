#include "engine/lane_pool.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "engine/candidate_build.h"
#include "engine/compile_pool.h"
#include "engine/fingerprint.h"
#include "engine/hello_environment.h"
#include "engine/inline_prebuild.h"
#include "engine/inline_record.h"
#include "engine/verifier.h"
#include "kvault/build_config.h"
#include "toolchain/build.h"
#include "worker/protocol.h"

namespace kvault {

std::string RecordArch(const EngineOptions& options, const Json& with_device) {
  if (!options.arch.empty()) return options.arch;
  using protocol::field::kDevice, protocol::field::kArch;
  if (with_device.is_object() && with_device.contains(kDevice))
    return with_device[kDevice].value(kArch, std::string());
  return "";
}

Verification VerifyLoaded(Verifier& verifier, const TaskFile& task,
                          const Result<Candidate>& candidate) {
  if (candidate) return verifier.Verify(task, *candidate);
  Verification v;
  v.status = OutcomeStatus::kParseError;
  v.message = candidate.error();
  v.reward = 0.0;
  return v;
}

AttemptRecord MakeRecord(const std::string& run, const TaskFile& task, const Candidate* candidate,
                         const std::string& candidate_path, const EngineOptions& options,
                         const Verification& v, const Json& environment) {
  AttemptRecord r;
  r.run = run;
  r.task = task.name;
  r.task_hash = task.hash;
  r.candidate_path = candidate_path;
  r.candidate_hash = "unreadable:" + candidate_path;  // the store's key needs a hash
  if (candidate) {
    r.candidate_hash = candidate->hash;
    r.candidate_source = candidate->source;
    r.format = std::string(ToString(candidate->format));
    r.language = candidate->language;
  }
  r.backend = std::string(ToString(options.backend));
  r.arch = RecordArch(options, environment);
  r.status = std::string(ToString(v.status));
  r.compiled = v.compiled;
  r.correct = v.correct;
  r.speedup = v.speedup;
  r.reference_ms = v.reference_ms;
  r.candidate_ms = v.candidate_ms;
  r.reward = v.reward;
  r.message = v.message;
  r.diagnostics = v.diagnostics;
  r.policy = v.policy;
  r.cases = CasesJson(v.records, v.phases);
  r.environment = environment;
  r.environment["build"] = v.build;
  if (!v.held_out.empty()) r.environment["held_out"] = v.held_out;
  r.environment["verify"] = VerdictSettings(options);
  r.engine_version = KVAULT_VERSION;
  r.seconds = v.seconds;
  return r;
}

Json VerdictSettings(const EngineOptions& options) {
  auto number = [](const std::optional<double>& x) { return x ? Json(*x) : Json(nullptr); };
  return {{"timing", !options.skip_timing}, {"rtol", number(options.rtol)}, {"atol", number(options.atol)}};
}

bool Reusable(const AttemptRecord& record, const Json& settings) {
  if (!record.origin.empty()) return false;  // a claim, not this engine's verdict
  auto status = OutcomeStatusFromString(record.status);
  if (!status || IsInfrastructure(*status)) return false;
  // What this backend cannot run is decided again: it says nothing of the candidate, and
  // rows of a KernelBench file judged by its text (before its load_inline calls decided)
  // must not keep a verdict that kept it out of pass@k.
  if (*status == OutcomeStatus::kUnsupported) return false;
  const Json made = record.environment.is_object() && record.environment.contains("verify")
                        ? record.environment["verify"]
                        : VerdictSettings(EngineOptions{});
  return made == settings;
}

std::optional<AttemptRecord> FindReusable(Store& store, const ContentKey& key, const Json& settings) {
  // A record without its policy (made before the engine recorded one) never answers.
  if (key.policy.empty()) return std::nullopt;
  auto found = store.FindVerified(key);
  if (!found || !found->has_value() || !Reusable(**found, settings)) return std::nullopt;
  return std::move(**found);
}

namespace {
// One worker of all the lanes reports the machine's build environment (options.h).
EngineOptions SharingTheHelloEnvironment(EngineOptions options) {
  if (!options.hello_environment) options.hello_environment = std::make_shared<HelloEnvironment>();
  return options;
}
}  // namespace

LanePool::LanePool(EngineOptions options, Store& store, Settings settings)
    : options_(SharingTheHelloEnvironment(std::move(options))), store_(store) {
  if (settings.devices.empty()) settings.devices.push_back(options_.device_index);
  int index = 0;
  for (int device : settings.devices)
    for (int l = 0; l < std::max(1, settings.lanes_per_device); ++l) {
      auto lane = std::make_unique<Lane>();
      lane->index = index++;
      lane->device = device;
      EngineOptions o = options_;
      o.device_index = device;
      lane->verifier = std::make_unique<Verifier>(o, settings.factory);
      lanes_.push_back(std::move(lane));
    }
  for (auto it = lanes_.rbegin(); it != lanes_.rend(); ++it) free_.push_back(it->get());  // lane 0 first
}

LanePool::~LanePool() {
  inline_calls_.reset();
  pool_.reset();
}

Result<Json> LanePool::Start(Lane& lane) {
  if (lane.ready) return lane.environment;
  auto hello = lane.verifier->Hello();
  lane.environment = EnvironmentFingerprint(hello ? *hello : Json(nullptr));
  if (!hello) return Error{hello.error()};
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (hello_.is_null()) {
      hello_ = *hello;
      arch_ = RecordArch(options_, lane.environment);
    }
  }
  lane.ready = true;
  return lane.environment;
}

std::string LanePool::arch() const {
  std::lock_guard<std::mutex> lock(mu_);
  return options_.arch.empty() ? arch_ : options_.arch;
}

LanePool::Lane& LanePool::Acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  freed_.wait(lock, [&] { return !free_.empty(); });
  Lane* lane = free_.back();
  free_.pop_back();
  return *lane;
}

void LanePool::Release(Lane& lane) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(&lane);
  }
  freed_.notify_one();
}

// --- builds ahead of the lanes --------------------------------------------------

void LanePool::StartAheadBuilds(int threads, const std::vector<std::pair<Candidate, std::string>>& known,
                                Ahead ahead) {
  if (threads < 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  Json hello;
  {
    std::lock_guard<std::mutex> lock(mu_);
    hello = hello_;
  }
  if (threads == 0 || hello.is_null() || pool_) return;
  int compiled = 0;
  bool inline_files = false;
  for (const auto& [candidate, task_path] : known) {
    compiled += IsCompiledFormat(candidate.format) ? 1 : 0;
    inline_files = inline_files || (!IsCompiledFormat(candidate.format) && CallsLoadInline(candidate));
  }
  if (ahead == Ahead::kKnownOnly) {
    if (compiled == 0 && !inline_files) return;
    if (!inline_files) threads = std::min(threads, compiled);
  }
  auto pool = std::make_unique<CompilePool>(threads, BuildExtension);
  // A KernelBench file's first build waits for its record; an extension candidate's
  // starts at once and makes the object itself, so only the files need it made first
  // (and a server, whose first request is yet to come).
  if (inline_files || ahead == Ahead::kOpen)
    if (auto like = TypicalExtensionRequest(options_, hello)) pool->Prepare(*like, options_.timeouts.compile);
  for (auto& lane : lanes_) lane->verifier->SetBuilder(pool->Builder(BuildExtension));
  {
    std::lock_guard<std::mutex> lock(mu_);
    pool_ = std::move(pool);
  }
  for (const auto& [candidate, task_path] : known) BuildAhead(candidate, task_path);
}

void LanePool::BuildAhead(const Candidate& candidate, const std::string& task_path) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!pool_) return;
  if (IsCompiledFormat(candidate.format)) {
    // A request that cannot be made here is left to the lane, which reports it.
    if (auto request = CandidateBuildRequest(candidate, options_, hello_))
      pool_->Submit(*request, options_.timeouts.compile);
    return;
  }
  if (!CallsLoadInline(candidate)) return;
  if (!inline_calls_) inline_calls_ = std::make_unique<InlinePrebuild>(options_, hello_, *pool_);
  InlinePrebuild& calls = *inline_calls_;
  lock.unlock();
  calls.Submit(candidate, task_path);
}

// --- the reuse rule ----------------------------------------------------------------

void LanePool::LearnTaskPolicy(const std::string& task_hash, const std::string& policy) {
  if (policy.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  task_policies_[task_hash] = policy;
}

std::string LanePool::AppliedPolicy(const TaskFile& task, const std::string& choice, Lane* lane) {
  const std::string wanted = choice.empty() ? options_.policy : choice;
  if (wanted != kPolicyTask) return wanted;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto known = task_policies_.find(task.hash); known != task_policies_.end()) return known->second;
  }
  if (!lane) return "";
  lane->verifier->SetPolicy(wanted);
  auto applied = lane->verifier->PolicyFor(task);
  if (!applied) return "";  // the verification reports why
  LearnTaskPolicy(task.hash, *applied);
  return *applied;
}

std::optional<AttemptRecord> LanePool::Stored(const AttemptSpec& spec, Lane* lane) {
  // A compile-only record says nothing of a full verification, and the reverse.
  if (spec.force || !spec.candidate || options_.compile_only) return std::nullopt;
  const std::string policy = AppliedPolicy(spec.task, spec.policy, lane);
  const std::string arch = lane ? RecordArch(options_, lane->environment) : this->arch();
  const Candidate& c = *spec.candidate;
  return FindReusable(store_,
                      ContentKey{spec.run, spec.task.hash, c.hash, c.language,
                                 std::string(ToString(options_.backend)), arch, policy, spec.sample},
                      VerdictSettings(options_));
}

// --- attempts ------------------------------------------------------------------------

void CountBeforeTheClock(Verification& v, double lane_start_s, double lookup_s) {
  v.seconds += lane_start_s + lookup_s;
  if (!v.phases) return;  // ended before any stage: nothing to add to
  if (lane_start_s > 0) v.phases->Add(Phase::kWorkerStart, lane_start_s);
  if (lookup_s > 0) v.phases->Add(Phase::kDescribe, lookup_s);
}

LaneAttempt LanePool::Attempt(Lane& lane, const AttemptSpec& spec, const std::function<bool()>& keep) {
  LaneAttempt out;
  // What the lane does, for stall reports (RunBatch): from here until it returns.
  LaneActivity& activity = lane.verifier->activity();
  std::string named = spec.sample.empty() ? std::filesystem::path(spec.candidate_path).filename().string() : spec.sample;
  if (named.empty() && spec.candidate) named = spec.candidate->hash.substr(0, 12);
  activity.Begin(spec.task.name + " <- " + named);
  struct Ended {
    LaneActivity& activity;
    ~Ended() { activity.End(); }
  } ended{activity};
  // Before the verification's own clock starts: the lane's workers (its first attempt
  // only) and, under policy `task`, the task's describe for the store lookup. Both are
  // counted in the attempt's phases below, so that no second of it goes unaccounted.
  const auto began = std::chrono::steady_clock::now();
  (void)Start(lane);  // a lane whose workers do not start records infra_error attempts
  const auto started = std::chrono::steady_clock::now();
  auto stored = Stored(spec, &lane);
  const double lane_start_s = std::chrono::duration<double>(started - began).count();
  const double lookup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (stored) {
    out.from_store = true;
    out.record = std::move(*stored);
    if (!spec.sample.empty() && out.record.task != spec.task.name) {
      // The same task's bytes under another name: this run's sample of this name.
      out.record.task = spec.task.name;
      out.record.candidate_path = spec.candidate_path;
      out.record.sample = spec.sample;
      if (Status st = store_.Put(out.record); !st) out.store_error = st.error();
    }
    return out;
  }
  const std::string choice = spec.policy.empty() ? options_.policy : spec.policy;
  lane.verifier->SetPolicy(choice);
  Verification v = VerifyLoaded(*lane.verifier, spec.task, spec.candidate);
  CountBeforeTheClock(v, lane_start_s, lookup_s);
  EngineOptions options = options_;
  options.device_index = lane.device;
  out.record = MakeRecord(spec.run, spec.task, spec.candidate ? &*spec.candidate : nullptr, spec.candidate_path,
                          options, v, lane.environment);
  out.record.sample = spec.sample;
  out.verification = std::move(v);
  if (keep && !keep()) {
    out.dropped = true;
    return out;
  }
  if (choice == kPolicyTask) LearnTaskPolicy(spec.task.hash, out.record.policy);
  if (Status st = store_.Put(out.record); !st) out.store_error = st.error();
  return out;
}

Status LanePool::Record(AttemptRecord& record) {
  if (record.backend.empty()) record.backend = std::string(ToString(options_.backend));
  if (record.arch.empty()) record.arch = arch();
  if (record.engine_version.empty()) record.engine_version = KVAULT_VERSION;
  return store_.Put(record);
}

}  // namespace kvault
