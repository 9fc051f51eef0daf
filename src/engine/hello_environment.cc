#include "engine/hello_environment.h"

#include "worker/protocol.h"

namespace kvault {
namespace {

// The hello fields a worker reports only when asked for the environment
// (python/kvault_worker/session: hello).
constexpr const char* kEnvironmentFields[] = {"build", protocol::field::kAvailableBackends,
                                              protocol::field::kUnavailableReasons};

}  // namespace

bool HelloEnvironment::Claim() {
  std::lock_guard<std::mutex> lock(mu_);
  if (environment_ || claimed_) return false;
  claimed_ = true;
  return true;
}

std::optional<Json> HelloEnvironment::Await() {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [&] { return environment_.has_value() || !claimed_; });
  if (environment_) return environment_;
  claimed_ = true;
  return std::nullopt;
}

void HelloEnvironment::Publish(const Json& hello) {
  Json environment = Json::object();
  for (const char* name : kEnvironmentFields)
    if (hello.is_object() && hello.contains(name)) environment[name] = hello[name];
  {
    std::lock_guard<std::mutex> lock(mu_);
    environment_ = std::move(environment);
    claimed_ = false;
  }
  changed_.notify_all();
}

void HelloEnvironment::Release() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    claimed_ = false;
  }
  changed_.notify_all();
}

void HelloEnvironment::Complete(Json& hello, const Json& environment) {
  if (!hello.is_object() || !environment.is_object()) return;
  for (const auto& [name, value] : environment.items()) hello[name] = value;
}

}  // namespace kvault
