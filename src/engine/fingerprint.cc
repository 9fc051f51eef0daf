#include "engine/fingerprint.h"

#include <sys/utsname.h>

#include <mutex>

#include "kvault/build_config.h"
#include "toolchain/tools.h"
#include "worker/protocol.h"

namespace kvault {

void AddWorkerSoftware(KeyHasher& h, const Json& hello) {
  namespace field = protocol::field;
  const Json device = hello.contains(field::kDevice) && hello[field::kDevice].is_object() ? hello[field::kDevice]
                                                                                          : Json::object();
  h.Add("device", device.value(field::kName, std::string()));
  h.Add("arch", device.value(field::kArch, std::string()));
  h.Add("torch", hello.value(field::kTorch, std::string()));
  h.Add("python", hello.value(field::kPython, std::string()));
  h.Add("worker_source", hello.value(field::kWorkerSource, std::string()));  // it makes the inputs
}

namespace {
// Tool discovery runs each compiler's --version: do it once per process.
const Json& Toolchains() {
  static std::once_flag once;
  static Json tools = Json::object();
  std::call_once(once, [] {
    for (const ToolInfo& t : DiscoverTools())
      tools[t.name] = t.found ? Json(t.version) : Json(nullptr);
  });
  return tools;
}
}  // namespace

std::future<void> DiscoverToolchainsAhead() {
  return std::async(std::launch::async, [] { (void)Toolchains(); });
}

Json EnvironmentFingerprint(const Json& hello) {
  Json env = Json::object();
  env["engine_version"] = KVAULT_VERSION;
  if (hello.is_object()) {
    namespace field = protocol::field;  // the same names as in hello
    for (const char* key : {field::kTorch, field::kTorchCuda, field::kTorchHip, field::kPython})
      env[key] = hello.value(key, Json(nullptr));
    env[field::kDevice] = hello.value(field::kDevice, Json::object());
  }
  env["toolchains"] = Toolchains();
  struct utsname u {};
  if (uname(&u) == 0) {
    env["os"] = std::string(u.sysname) + " " + u.release;
    env["machine"] = u.machine;
    env["host"] = u.nodename;
  }
  return env;
}

}  // namespace kvault
