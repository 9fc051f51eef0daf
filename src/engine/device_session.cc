#include "engine/device_session.h"

#include <cstdio>
#include <filesystem>

#include "engine/held_out_key.h"
#include "engine/hello_environment.h"
#include "engine/worker_outcome.h"
#include "engine/worker_sandbox.h"
#include "util/child_process.h"
#include "util/env.h"
#include "worker/protocol.h"

namespace kvault {

WorkerFactory ProcessWorkerFactory() {
  return [](const WorkerOptions& o) -> Result<std::unique_ptr<WorkerConnection>> {
    auto w = ProcessWorker::Start(o);
    if (!w) return Error{w.error()};
    return std::unique_ptr<WorkerConnection>(std::move(*w));
  };
}

DeviceSession::DeviceSession(const EngineOptions& options, std::string hello_backend,
                             WorkerFactory factory, ZygoteFactory zygotes)
    : options_(options), hello_backend_(std::move(hello_backend)), factory_(std::move(factory)),
      zygotes_(std::move(zygotes)) {
  if (!factory_) {
    factory_ = ProcessWorkerFactory();
    if (!zygotes_) zygotes_ = &Zygote::Spawn;
  }
  use_zygote_ = options_.zygote && zygotes_;  // tests with fake workers fork only when they say so
}

DeviceSession::~DeviceSession() {
  if (auto spare = TakeSpare()) spare->Kill();
  if (spare_reference_.valid())
    if (auto started = spare_reference_.get(); started && started->worker) started->worker->Kill();
  for (auto& w : workers_)
    if (w) w->Kill();
}

void DeviceSession::StartSpare() {
  if (spare_.valid() || !use_zygote_ || !zygote_ || !zygote_->alive() || hello_.is_null()) return;
  LaunchSpare();
}

void DeviceSession::Prestart() {
  if (spare_.valid() || !use_zygote_ || !options_.sandbox_error.empty() || hello_.is_null() ||
      workers_[static_cast<int>(WorkerRole::kCandidate)])
    return;
  LaunchSpare();  // starts the zygote too, when it is not running yet
}

void DeviceSession::PrestartReference() {
  if (spare_reference_.valid() || hello_.is_null()) return;
  spare_reference_ = std::async(std::launch::async, [this] { return StartWorker(WorkerRole::kReference); });
}

void DeviceSession::LaunchSpare() {
  // hello_ is set, so Greet only reads it; the zygote is this thread's until TakeSpare.
  spare_ = std::async(std::launch::async, [this]() -> Result<std::unique_ptr<WorkerConnection>> {
    auto forked = ForkCandidate(&spare_folder_);
    if (!forked) return Error{forked.error()};
    return Greet(std::move(*forked));
  });
}

std::unique_ptr<WorkerConnection> DeviceSession::TakeSpare() {
  if (!spare_.valid()) return nullptr;
  auto spare = spare_.get();
  if (!spare || !*spare || !(*spare)->alive()) return nullptr;
  return std::move(*spare);
}

WorkerOptions DeviceSession::MakeWorkerOptions() const {
  WorkerOptions o;
  o.argv = {options_.python, "-m", "kvault_worker"};
  std::string pythonpath = options_.source_root + "/python";
  if (auto existing = GetEnv("PYTHONPATH"); existing && !existing->empty())
    pythonpath += ":" + *existing;
  o.env_set = {{"PYTHONPATH", pythonpath},
               {"PYTHONUNBUFFERED", "1"},
               {"PYTHONDONTWRITEBYTECODE", "1"},
               {"KVAULT_WORKER_FDS", "3,4"}};
  o.env_set.insert(o.env_set.end(), worker_env_.begin(), worker_env_.end());
  return o;
}

void DeviceSession::SpawnZygoteEarly() {
  // The session's first worker (hello_ is unset, so no spare is pending and zygote_ is
  // this thread's). --compile-only wants a candidate worker only to note a
  // KernelBench file's load_inline calls: its zygote waits for the first of those.
  if (!use_zygote_ || !options_.sandbox_error.empty() || options_.compile_only || !hello_.is_null() ||
      spare_.valid() || zygote_)
    return;
  (void)SpawnZygote();  // on failure the first candidate's ForkCandidate tries again and says why
}

Status DeviceSession::SpawnZygote() {
  WorkerOptions options = MakeWorkerOptions();
  options.argv = {options_.python, "-m", "kvault_worker.zygote"};
  // The zygote keeps its capabilities to give each worker a PID namespace; each
  // worker drops them before it reads a request (docs/sandbox.md).
  EngineOptions zygote_options = options_;
  zygote_options.sandbox.keep_capabilities = true;
  options.env_set.emplace_back("KVAULT_ZYGOTE_DROP_CAPS",
                               options_.sandbox.mode == SandboxMode::kOff ? "0" : "1");
  auto sandboxed = SandboxWorkerCommand(zygote_options, /*candidate=*/true, hello_backend_ == "cpu",
                                        options.argv, options.env_set);
  if (!sandboxed) return Error{sandboxed.error()};
  options.argv = std::move(sandboxed->argv);
  options.env_set = std::move(sandboxed->env_set);
  auto started = zygotes_(options, options_.timeouts.start);
  if (!started) return Error{started.error()};
  zygote_ = std::move(*started);
  zygote_dir_ = std::move(sandboxed->private_dir);
  return Status::Ok();
}

Result<std::unique_ptr<WorkerConnection>> DeviceSession::ForkCandidate(std::string* folder) {
  // One that died while it imported is waited for below, which says why; one that
  // died after it was ready is replaced.
  if (zygote_ && zygote_->ready() && !zygote_->alive()) zygote_.reset();
  if (!zygote_)
    if (Status st = SpawnZygote(); !st) return Error{st.error()};
  if (Status ready = zygote_->AwaitReady(); !ready) {
    zygote_.reset();
    zygote_dir_.reset();
    return Error{ready.error()};
  }
  WorkerOptions worker_options;
  if (zygote_dir_) worker_options.cwd = zygote_dir_->path() + "/w" + std::to_string(++forks_);
  *folder = worker_options.cwd;
  auto forked = zygote_->Fork(worker_options, options_.timeouts.start);
  if (!forked) return Error{forked.error()};
  return std::unique_ptr<WorkerConnection>(std::move(*forked));
}

Result<WorkerConnection*> DeviceSession::Get(WorkerRole role) {
  auto& slot = workers_[static_cast<int>(role)];
  if (slot && slot->alive()) return slot.get();
  Discard(role);  // a dead one's folder goes too
  if (role == WorkerRole::kCandidate && use_zygote_ && options_.sandbox_error.empty()) {
    if (auto spare = TakeSpare()) {
      slot = std::move(spare);
      candidate_forked_ = true;
      folders_[static_cast<int>(role)] = spare_folder_;
      StartSpare();  // the next one starts while this one works
      return slot.get();
    }
    std::string folder;
    if (auto forked = ForkCandidate(&folder)) {
      if (auto greeted = Greet(std::move(*forked)); greeted) {
        slot = std::move(*greeted);
        candidate_forked_ = true;
        folders_[static_cast<int>(role)] = folder;
        StartSpare();
        return slot.get();
      } else if (SaysOutOfMemory(greeted.error())) {
        // The device had no memory left for the fork's context: a state of the device
        // (other processes' memory), not of the zygote, whose next fork may well start.
        return Error{"the candidate's worker could not open the device: " + greeted.error()};
      } else if (!ChildProcess::Stopping()) {  // an interrupted command's stop killed it: no news
        std::fprintf(stderr, "kvault: a worker forked by the zygote failed to start; "
                             "starting workers from scratch from now on: %s\n", greeted.error().c_str());
      }
    } else if (!ChildProcess::Stopping()) {
      std::fprintf(stderr, "kvault: no worker zygote (%s); starting workers from scratch\n",
                   forked.error().c_str());
    }
    use_zygote_ = false;
    zygote_.reset();
  }
  std::optional<Result<Started>> started;
  if (role == WorkerRole::kReference && spare_reference_.valid()) {
    started = spare_reference_.get();  // waits for it when it is still starting
    if (*started && !(*started)->worker->alive()) started.reset();
    else if (!*started) started.reset();  // a fresh start below says why, if it fails again
  }
  if (role == WorkerRole::kReference) SpawnZygoteEarly();  // imports while this one starts
  if (!started) started = StartWorker(role);
  if (!*started) return Error{started->error()};
  private_dirs_[static_cast<int>(role)] = std::move((*started)->private_dir);
  const auto& dir = private_dirs_[static_cast<int>(role)];
  folders_[static_cast<int>(role)] = dir ? dir->path() : std::string();
  slot = std::move((*started)->worker);
  if (role == WorkerRole::kCandidate) candidate_forked_ = false;
  return slot.get();
}

Result<DeviceSession::Started> DeviceSession::StartWorker(WorkerRole role) {
  WorkerOptions options = MakeWorkerOptions();
  auto sandboxed = SandboxWorkerCommand(options_, role == WorkerRole::kCandidate,
                                        hello_backend_ == "cpu", options.argv, options.env_set);
  if (!sandboxed) return Error{"cannot sandbox the worker: " + sandboxed.error()};
  options.argv = std::move(sandboxed->argv);
  options.env_set = std::move(sandboxed->env_set);
  Started out;
  out.private_dir = std::move(sandboxed->private_dir);
  auto started = factory_(options);
  if (!started) return Error{"cannot start worker (" + options_.python + "): " + started.error()};
  auto greeted = Greet(std::move(*started));
  if (!greeted) return Error{greeted.error()};
  out.worker = std::move(*greeted);
  return out;
}

std::unique_ptr<FrozenTree> DeviceSession::FreezeCandidate() {
  const auto& worker = workers_[static_cast<int>(WorkerRole::kCandidate)];
  if (!worker) return nullptr;
  // A forked worker's pid is the zygote's to know: everything the zygote forked stops
  // (the zygote itself runs no candidate code). A worker started from scratch stops
  // with all it started (through the sandbox helper: the helper keeps running).
  if (candidate_forked_ && zygote_) return std::make_unique<FrozenTree>(zygote_->pid(), FrozenTree::kWithoutRoot);
  const bool helper = !options_.sandbox_launcher.empty() && options_.sandbox.mode != SandboxMode::kOff;
  return std::make_unique<FrozenTree>(worker->pid(), helper ? FrozenTree::kWithoutRoot : FrozenTree::kWithRoot);
}

// A worker's processes: everything below `root`, and `root` itself unless it is the
// sandbox's helper, which runs none of the worker's code.
static std::vector<pid_t> TreeOf(pid_t root, bool with_root) {
  if (root <= 0) return {};
  std::vector<pid_t> pids = Descendants(root);
  if (with_root) pids.push_back(root);
  return pids;
}

std::vector<pid_t> DeviceSession::CandidateProcesses() const {
  const auto& worker = workers_[static_cast<int>(WorkerRole::kCandidate)];
  if (!worker) return {};
  if (candidate_forked_ && zygote_) return TreeOf(zygote_->pid(), false);
  const bool helper = !options_.sandbox_launcher.empty() && options_.sandbox.mode != SandboxMode::kOff;
  return TreeOf(worker->pid(), !helper);
}

std::vector<pid_t> DeviceSession::ReferenceProcesses() const {
  const auto& worker = workers_[static_cast<int>(WorkerRole::kReference)];
  if (!worker) return {};
  const bool helper = !options_.sandbox_launcher.empty() && options_.sandbox.mode != SandboxMode::kOff;
  return TreeOf(worker->pid(), !helper);
}

Result<Json> DeviceSession::AskHello(WorkerConnection& w, bool environment) {
  WorkerReply r = w.Call(HelloRequest{hello_backend_, options_.device_index, environment, HeldOutKey()}.ToJson(),
                         options_.timeouts.start);
  if (r.failure != WorkerFailure::kNone) {
    std::string log = w.TakeLog();
    return Error{"worker failed to start: " + r.detail + (log.empty() ? "" : "\n" + log)};
  }
  if (!ReplyOk(r)) {
    std::string log = w.TakeLog();  // e.g. PyTorch's own warning of why CUDA did not start
    return Error{"worker refused backend " + hello_backend_ + ": " +
                 ReplyString(r.response, protocol::field::kMessage, "no message") +
                 (log.empty() ? "" : "\n" + log)};
  }
  // A worker of another version would misread requests or replies: none is used.
  if (Status st = CheckHello(r.response); !st) return Error{"worker unusable: " + st.error()};
  return std::move(r.response);
}

Result<std::unique_ptr<WorkerConnection>> DeviceSession::Greet(std::unique_ptr<WorkerConnection> w) {
  // Only the session's first worker reports the build environment and the backend
  // probe (about a second of subprocesses); later workers run on the same machine. Of
  // sessions sharing options_.hello_environment (a pool's lanes), only the first to
  // come asks for them; the others are greeted without them at the same time and
  // complete their answers from its once it answered (or, when it got none, ask).
  const bool first = hello_.is_null();
  HelloEnvironment* shared = first ? options_.hello_environment.get() : nullptr;
  // A claim still held when this returns (no answer) passes to the next session.
  struct Claim {
    HelloEnvironment* held;
    ~Claim() {
      if (held) held->Release();
    }
  } claim{shared && shared->Claim() ? shared : nullptr};
  auto answer = AskHello(*w, first && (!shared || claim.held));
  if (answer && shared && !claim.held) {
    if (auto known = shared->Await()) {
      HelloEnvironment::Complete(*answer, *known);
    } else {
      claim.held = shared;  // the first got no answer: this one asks in its place
      answer = AskHello(*w, true);
    }
  }
  if (!answer) {
    w->Kill();
    return Error{answer.error()};
  }
  if (first) {
    if (claim.held) claim.held->Publish(*answer);
    claim.held = nullptr;
    hello_ = std::move(*answer);
  }
  return w;
}

ReferenceReply DeviceSession::AskReference(const Json& request, std::chrono::milliseconds timeout,
                                           const std::string& what) {
  auto w = Get(WorkerRole::kReference);
  if (!w) return TrustedStartFailure(what, w.error());
  WorkerReply r = (*w)->Call(request, timeout);
  if (ReplyOk(r)) return std::move(r.response);
  (*w)->TakeLog();
  if (r.failure != WorkerFailure::kNone) Discard(WorkerRole::kReference);
  return JudgeTrustedFailure(r, what);
}

void DeviceSession::Discard(WorkerRole role) {
  auto& slot = workers_[static_cast<int>(role)];
  if (slot) slot->Kill();
  slot.reset();
  // Nothing the worker wrote outlives it (its /dev/shm ended with it).
  if (std::string& folder = folders_[static_cast<int>(role)]; !folder.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(folder, ignored);
    folder.clear();
  }
}

Result<Json> DeviceSession::Hello() {
  if (hello_.is_null()) {
    auto w = Get(WorkerRole::kReference);
    if (!w) return Error{w.error()};
  }
  return hello_;
}

}  // namespace kvault
