#include <iostream>

#include "cache/limits.h"
#include "cli/commands.h"
#include "engine/backend_probe.h"
#include "engine/engine_env.h"

namespace kvault::cli {

std::optional<EngineOptions> MakeOptions(const CommonFlags& flags, bool compile_only) {
  EngineOptions o;
  ApplyEnvironment(o);
  if (auto limits = CacheLimits::FromEnv(); !limits) {  // checked once here, not per build
    std::cerr << "kvault: " << limits.error() << "\n";
    return std::nullopt;
  }
  o.arch = flags.arch;
  o.compile_only = compile_only;
  o.skip_timing = flags.no_timing;
  o.policy = flags.policy;
  if (flags.run_timeout_s > 0)
    o.timeouts.run = std::chrono::seconds(flags.run_timeout_s);
  if (flags.load_timeout_s > 0) o.timeouts.load = std::chrono::seconds(flags.load_timeout_s);
  if (flags.compile_timeout_s > 0) o.timeouts.compile = std::chrono::seconds(flags.compile_timeout_s);
  auto reward = RewardKindFromString(flags.reward);
  if (!reward) {
    std::cerr << "kvault: unknown reward '" << flags.reward << "'\n";
    return std::nullopt;
  }
  o.reward = *reward;
  if (flags.backend != "auto") {
    auto b = BackendFromString(flags.backend);
    if (!b) {
      std::cerr << "kvault: unknown backend '" << flags.backend << "'\n";
      return std::nullopt;
    }
    o.backend = *b;
    return o;
  }
  if (compile_only) {
    std::cerr << "kvault: --compile-only needs --backend (cpu, cuda or hip)\n";
    return std::nullopt;
  }
  auto probe = ProbeBackends(o);
  if (!probe) {
    std::cerr << "kvault: cannot detect a backend: " << probe.error()
              << "\n  (is PyTorch importable by $KVAULT_PYTHON=" << o.python
              << "? `kvault doctor` says more)\n";
    return std::nullopt;
  }
  o.backend = ChooseBackend(*probe);
  return o;
}

}  // namespace kvault::cli
