#include "engine/device_session.h"

#include "engine/worker_sandbox.h"
#include "util/env.h"

namespace kvault {

WorkerFactory ProcessWorkerFactory() {
  return [](const WorkerOptions& o) -> Result<std::unique_ptr<WorkerConnection>> {
    auto w = ProcessWorker::Start(o);
    if (!w) return Error{w.error()};
    return std::unique_ptr<WorkerConnection>(std::move(*w));
  };
}

DeviceSession::DeviceSession(const EngineOptions& options, std::string hello_backend,
                             WorkerFactory factory)
    : options_(options), hello_backend_(std::move(hello_backend)), factory_(std::move(factory)) {
  if (!factory_) factory_ = ProcessWorkerFactory();
}

DeviceSession::~DeviceSession() {
  for (auto& w : workers_)
    if (w) w->Kill();
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
  return o;
}

Result<WorkerConnection*> DeviceSession::Get(WorkerRole role) {
  auto& slot = workers_[static_cast<int>(role)];
  if (slot && slot->alive()) return slot.get();
  slot.reset();
  WorkerOptions options = MakeWorkerOptions();
  auto sandboxed = SandboxWorkerCommand(options_, role == WorkerRole::kCandidate,
                                        hello_backend_ == "cpu", options.argv, options.env_set);
  if (!sandboxed) return Error{"cannot sandbox the worker: " + sandboxed.error()};
  options.argv = std::move(sandboxed->argv);
  options.env_set = std::move(sandboxed->env_set);
  private_dirs_[static_cast<int>(role)] = std::move(sandboxed->private_dir);
  auto started = factory_(options);
  if (!started) return Error{"cannot start worker (" + options_.python + "): " + started.error()};
  std::unique_ptr<WorkerConnection> w = std::move(*started);
  WorkerReply r = w->Call(Json{{"op", "hello"},
                               {"backend", hello_backend_},
                               {"device_index", options_.device_index}},
                          options_.timeouts.start);
  if (r.failure != WorkerFailure::kNone) {
    std::string log = w->TakeLog();
    w->Kill();
    return Error{"worker failed to start: " + r.detail + (log.empty() ? "" : "\n" + log)};
  }
  if (!r.response.value("ok", false)) {
    w->Kill();
    return Error{"worker refused backend " + hello_backend_ + ": " +
                 r.response.value("message", std::string("no message"))};
  }
  hello_ = r.response;
  slot = std::move(w);
  return slot.get();
}

void DeviceSession::Discard(WorkerRole role) {
  auto& slot = workers_[static_cast<int>(role)];
  if (slot) slot->Kill();
  slot.reset();
}

Result<Json> DeviceSession::Hello() {
  if (hello_.is_null()) {
    auto w = Get(WorkerRole::kReference);
    if (!w) return Error{w.error()};
  }
  return hello_;
}

}  // namespace kvault
