#include "engine/worker_sandbox.h"

#include <unistd.h>

#include "sandbox/capabilities.h"
#include "sandbox/launch.h"

namespace kvault {

void HideStoreFromWorkers(EngineOptions& options, const std::string& db_path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    options.sandbox.hidden.push_back(db_path + suffix);
}

Result<SandboxedCommand> SandboxWorkerCommand(const EngineOptions& options, bool candidate,
                                              bool cpu_backend, std::vector<std::string> argv,
                                              std::vector<std::pair<std::string, std::string>> env_set) {
  if (!options.sandbox_error.empty()) return Error{options.sandbox_error};
  SandboxedCommand out;
  SandboxPolicy policy = options.sandbox;
  if (options.sandbox_launcher.empty()) policy.mode = SandboxMode::kOff;
  if (policy.mode == SandboxMode::kOff) {
    auto plan = PlanSandbox(policy, HostCapabilities{}, ::geteuid() == 0);
    out.argv = std::move(argv);
    out.env_set = std::move(env_set);
    if (plan) out.layers = plan->layers;
    return out;
  }
  const std::string& cache = options.cache_dir;
  const std::string tmp = cache + "/tmp", refs = cache + "/refs";
  const std::string extensions = cache + "/torch_extensions", triton = cache + "/triton";
  const std::string locks = cache + "/locks";  // the timing locks (engine/verifier.h)
  for (const auto& d : {tmp, refs, extensions, triton, locks})
    if (auto st = EnsureDir(d); !st) return Error{"sandbox: " + st.error()};
  auto private_dir = TempDir::Create(tmp, "worker");
  if (!private_dir) return Error{"sandbox: no private folder: " + private_dir.error()};
  policy.private_dir = private_dir->path();
  policy.writable.insert(policy.writable.end(), {tmp, extensions, triton, "/dev", "/dev/shm"});
  if (candidate) {
    policy.hidden.push_back(refs);
    policy.hidden.push_back(locks);  // a held timing lock would stall other lanes
  } else {
    policy.writable.push_back(refs);
    policy.hidden.clear();  // the store stays hidden only from candidates
  }
  if (!cpu_backend) policy.limits.address_space_bytes = 0;
  env_set.emplace_back("HOME", policy.private_dir);
  env_set.emplace_back("TMPDIR", policy.private_dir);
  env_set.emplace_back("TORCH_EXTENSIONS_DIR", extensions);
  env_set.emplace_back("TRITON_CACHE_DIR", triton);
  policy.env_set = env_set;

  HostCapabilities host;
  if (auto probed = ProbeHost(options.sandbox_launcher)) {
    host = *probed;
  } else {
    for (const char* l : kProbedLayers) host.layers[l] = probed.error();
  }
  auto plan = PlanSandbox(policy, host, ::geteuid() == 0);
  if (!plan) return Error{plan.error()};
  out.argv = SandboxedArgv(options.sandbox_launcher, *plan, argv);
  out.env_set = std::move(env_set);
  out.private_dir = std::move(*private_dir);
  out.layers = plan->layers;
  return out;
}

}  // namespace kvault
