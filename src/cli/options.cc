#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cache/limits.h"
#include "cli/commands.h"
#include "engine/backend_probe.h"
#include "engine/engine_env.h"
#include "util/files.h"

namespace kvault::cli {
namespace {

// The cache folder must take files before anything is built or described there;
// a folder that cannot would otherwise fail every attempt, one by one.
Status CheckCacheWritable(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error{"cannot create the cache folder " + dir + ": " + ec.message()};
  const std::string probe = dir + "/.kvault-write-check";
  if (Status st = WriteFileAtomic(probe, "ok\n"); !st)
    return Error{"cannot write in the cache folder " + dir + ": " + st.error()};
  std::filesystem::remove(probe, ec);
  return Status::Ok();
}

// An explicit GPU backend the worker's PyTorch cannot use would fail every attempt
// as an infra_error: say so before starting.
Status CheckBackendUsable(const EngineOptions& o) {
  auto probe = ProbeBackends(o);
  if (!probe) return Error{"cannot start a worker: " + probe.error()};
  const std::string name(ToString(o.backend));
  if (std::find(probe->available.begin(), probe->available.end(), name) != probe->available.end())
    return Status::Ok();
  std::string why;  // the probe's line about this backend: "<name>: <reason>"
  for (size_t at = 0; at < probe->reasons.size();) {
    size_t end = probe->reasons.find('\n', at);
    if (end == std::string::npos) end = probe->reasons.size();
    if (probe->reasons.compare(at, name.size() + 2, name + ": ") == 0)
      why = probe->reasons.substr(at + name.size() + 2, end - at - name.size() - 2);
    at = end + 1;
  }
  return Error{"backend " + name + " is not usable here" + (why.empty() ? "" : ": " + why) +
               " (`kvault doctor` lists the usable backends)"};
}

// The CPU build has no target architecture: an --arch would only change the build
// key (and so rebuild) without changing the build.
void IgnoreArchOnCpu(EngineOptions& o) {
  if (o.backend != Backend::kCpu || o.arch.empty()) return;
  std::cerr << "kvault: --arch " << o.arch << " does not apply to the cpu backend; ignored\n";
  o.arch.clear();
}

}  // namespace

std::optional<std::string> BackendUnusable(const EngineOptions& o) {
  if (o.backend == Backend::kCpu) return std::nullopt;
  if (Status st = CheckBackendUsable(o); !st) return st.error();
  return std::nullopt;
}

bool ReportBackendUnusable(const EngineOptions& o) {
  auto why = BackendUnusable(o);
  if (why) std::cerr << "kvault: " << *why << "\n";
  return why.has_value();
}

std::optional<EngineOptions> MakeOptions(const CommonFlags& flags, bool compile_only, int* exit_code,
                                         BackendCheck check) {
  *exit_code = kExitMisuse;
  EngineOptions o;
  ApplyEnvironment(o);
  if (auto limits = CacheLimits::FromEnv(); !limits) {  // checked once here, not per build
    std::cerr << "kvault: " << limits.error() << "\n";
    return std::nullopt;
  }
  if (Status st = CheckCacheWritable(o.cache_dir); !st) {
    std::cerr << "kvault: " << st.error() << " (set KVAULT_CACHE_DIR to a writable folder)\n";
    *exit_code = kExitInfra;
    return std::nullopt;
  }
  o.arch = flags.arch;
  o.compile_only = compile_only;
  o.skip_timing = flags.no_timing;
  o.policy = flags.policy;
  if (flags.tolerance == "kernelbench") o.rtol = o.atol = kKernelBenchTolerance;
  if (flags.atol) o.atol = *flags.atol;
  if (flags.rtol) o.rtol = *flags.rtol;
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
    IgnoreArchOnCpu(o);
    if (!compile_only && check == BackendCheck::kNow && ReportBackendUnusable(o)) return std::nullopt;
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
  IgnoreArchOnCpu(o);
  return o;
}

}  // namespace kvault::cli
