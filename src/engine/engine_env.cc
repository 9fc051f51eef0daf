#include "engine/engine_env.h"

#include <stdexcept>
#include <string>

#include "sandbox/capabilities.h"
#include "util/env.h"
#include "util/env_vars.h"

namespace kvault {

void ApplyEnvironment(EngineOptions& options) {
  if (auto p = KvaultEnv("KVAULT_PYTHON"); p && !p->empty()) options.python = *p;
  options.cache_dir = DefaultCacheDir();
  options.source_root = SourceRoot();
  if (auto policy = PolicyFromEnvironment(/*cpu_backend=*/true)) {
    options.sandbox = *policy;
    // Only kvault answers sandbox-exec; another program that links the engine (a test
    // binary) has no launcher, as options made by hand have none.
    if (SelfIsSandboxLauncher()) options.sandbox_launcher = SelfExecutable();
  } else {
    options.sandbox_error = policy.error();
  }
  if (auto b = KvaultEnv("KVAULT_DEVICE_COMPARE_MIN_BYTES"); b && !b->empty()) {
    try {
      size_t used = 0;
      const long long v = std::stoll(*b, &used);
      if (used != b->size()) throw std::invalid_argument("trailing characters");
      options.device_compare_min_bytes = v;
    } catch (const std::exception&) {
      if (options.sandbox_error.empty())
        options.sandbox_error = "KVAULT_DEVICE_COMPARE_MIN_BYTES must be a whole number of bytes, not '" + *b + "'";
    }
  }
  const std::string groups = KvaultEnv("KVAULT_GROUP_TURNS").value_or("on");
  if (groups == "off") options.timing.group_max = 1;
  if (groups != "on" && groups != "off" && options.sandbox_error.empty())
    options.sandbox_error = "KVAULT_GROUP_TURNS must be on or off, not '" + groups + "'";
  const std::string zygote = KvaultEnv("KVAULT_ZYGOTE").value_or("on");
  options.zygote = zygote != "off";
  if (zygote != "on" && zygote != "off" && options.sandbox_error.empty())
    options.sandbox_error = "KVAULT_ZYGOTE must be on or off, not '" + zygote + "'";
}

}  // namespace kvault
