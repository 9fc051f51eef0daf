#include "engine/backend_probe.h"

#include <algorithm>

#include "engine/device_session.h"
#include "worker/protocol.h"

namespace kvault {

Result<BackendProbe> ProbeBackends(const EngineOptions& options) {
  DeviceSession session(options, "cpu", ProcessWorkerFactory());
  auto hello = session.Hello();
  if (!hello) return Error{hello.error()};
  BackendProbe p;
  p.hello = *hello;
  p.available = {"cpu"};
  using protocol::field::kAvailableBackends, protocol::field::kUnavailableReasons;
  if (hello->contains(kAvailableBackends) && (*hello)[kAvailableBackends].is_array())
    p.available = (*hello)[kAvailableBackends].get<std::vector<std::string>>();
  if (hello->contains(kUnavailableReasons) && (*hello)[kUnavailableReasons].is_object())
    for (const auto& [k, v] : (*hello)[kUnavailableReasons].items())
      p.reasons += k + ": " + v.get<std::string>() + "\n";
  return p;
}

Backend ChooseBackend(const BackendProbe& probe) {
  auto has = [&](const char* b) {
    return std::find(probe.available.begin(), probe.available.end(), b) != probe.available.end();
  };
  if (has("hip")) return Backend::kHip;
  if (has("cuda")) return Backend::kCuda;
  return Backend::kCpu;
}

}  // namespace kvault
