#include "engine/backend_probe.h"

#include <algorithm>

#include "engine/device_session.h"

namespace kvault {

Result<BackendProbe> ProbeBackends(const EngineOptions& options) {
  DeviceSession session(options, "cpu", ProcessWorkerFactory());
  auto hello = session.Hello();
  if (!hello) return Error{hello.error()};
  BackendProbe p;
  p.hello = *hello;
  p.available = {"cpu"};
  if (hello->contains("available_backends") && (*hello)["available_backends"].is_array())
    p.available = (*hello)["available_backends"].get<std::vector<std::string>>();
  if (hello->contains("unavailable_reasons") && (*hello)["unavailable_reasons"].is_object())
    for (const auto& [k, v] : (*hello)["unavailable_reasons"].items())
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
