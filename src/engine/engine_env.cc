#include "engine/engine_env.h"

#include "kvault/build_config.h"
#include "sandbox/capabilities.h"
#include "util/env.h"

namespace kvault {

void ApplyEnvironment(EngineOptions& options) {
  if (auto p = GetEnv("KVAULT_PYTHON"); p && !p->empty()) options.python = *p;
  options.cache_dir = DefaultCacheDir();
  if (auto r = GetEnv("KVAULT_SOURCE_ROOT"); r && !r->empty())
    options.source_root = *r;
  else
    options.source_root = KVAULT_DEFAULT_SOURCE_ROOT;
  if (auto policy = PolicyFromEnvironment(/*cpu_backend=*/true)) {
    options.sandbox = *policy;
    options.sandbox_launcher = SelfExecutable();
  } else {
    options.sandbox_error = policy.error();
  }
  const std::string zygote = GetEnv("KVAULT_ZYGOTE").value_or("on");
  options.zygote = zygote != "off";
  if (zygote != "on" && zygote != "off" && options.sandbox_error.empty())
    options.sandbox_error = "KVAULT_ZYGOTE must be on or off, not '" + zygote + "'";
}

}  // namespace kvault
