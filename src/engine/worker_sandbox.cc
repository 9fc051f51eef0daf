#include "engine/worker_sandbox.h"

#include <unistd.h>

#include <filesystem>

#include "sandbox/capabilities.h"
#include "sandbox/launch.h"
#include "util/env.h"
#include "util/env_vars.h"
#include "util/strings.h"

namespace kvault {

void HideStoreFromWorkers(EngineOptions& options, const std::string& db_path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    options.sandbox.hidden.push_back(db_path + suffix);
}

std::vector<std::string> OtherCacheFolders(const std::string& cache) {
  namespace fs = std::filesystem;
  std::error_code ec;
  auto same = [&](const fs::path& a) { return fs::equivalent(a, cache, ec); };
  std::vector<std::string> out;
  auto add = [&](const fs::path& p) {
    if (!fs::is_directory(p, ec) || same(p)) return;
    for (const auto& o : out)
      if (o == p.string()) return;
    out.push_back(p.string());
  };
  // Where DefaultCacheDir looks when KVAULT_CACHE_DIR is not set.
  if (auto xdg = GetEnv("XDG_CACHE_HOME"); xdg && !xdg->empty()) add(fs::path(*xdg) / "kvault");
  if (auto home = GetEnv("HOME"); home && !home->empty()) add(fs::path(*home) / ".cache" / "kvault");
  // Caches beside this one and in the host's temporary folders: a folder with refs/
  // and build/ or tmp/.
  const fs::path parent = fs::path(cache).lexically_normal().parent_path();
  for (const fs::path& dir : {parent, fs::path("/tmp"), fs::path("/var/tmp")}) {
    if (dir.empty() || dir == dir.root_path()) continue;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const fs::path p = it->path();
      std::error_code e;
      if (fs::is_directory(p / "refs", e) && (fs::is_directory(p / "build", e) || fs::is_directory(p / "tmp", e)))
        add(p);
    }
    ec.clear();
  }
  if (auto extra = KvaultEnv("KVAULT_SANDBOX_HIDE"); extra && !extra->empty()) {
    for (const auto& p : Split(*extra, ':'))
      if (!p.empty()) add(p);
  }
  return out;
}

std::vector<std::string> CredentialPaths() {
  std::vector<std::string> out;
  auto home = GetEnv("HOME");
  if (!home || home->empty()) return out;
  for (const char* p : {".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker",
                        ".netrc", ".git-credentials", ".pypirc", ".cache/huggingface", ".huggingface"})
    out.push_back(*home + "/" + p);
  return out;
}

namespace {

constexpr uint64_t kCompileFileBytes = 512ull << 20;

// What the host's sandbox helper can apply (probed once per launcher).
HostCapabilities ProbedHost(const std::string& launcher) {
  HostCapabilities host;
  if (auto probed = ProbeHost(launcher)) {
    host = *probed;
  } else {
    for (const char* l : kProbedLayers) host.layers[l] = probed.error();
  }
  return host;
}

// Code a worker or a compile runs (candidates', tasks') sees none of the cache's kinds
// but those bound back, no other cache, no store and no keys or tokens (it has no
// network, but what it prints reaches the store and the client).
void HideFromWorkerCode(SandboxPolicy& policy, const std::string& cache) {
  policy.hidden.push_back(cache);
  for (const auto& other : OtherCacheFolders(cache)) policy.hidden.push_back(other);
  for (const auto& secret : CredentialPaths()) policy.hidden.push_back(secret);
}

bool IsBelow(const std::string& path, const std::string& folder) {
  const auto p = std::filesystem::path(path).lexically_normal().string();
  const auto f = std::filesystem::path(folder).lexically_normal().string();
  return p.size() > f.size() && p.compare(0, f.size(), f) == 0 && p[f.size()] == '/';
}

}  // namespace

Result<std::vector<std::string>> SandboxBuildCommand(const EngineOptions& options, const std::string& source_path,
                                                     const std::vector<std::string>& argv,
                                                     const std::vector<std::string>& writable) {
  if (!options.sandbox_error.empty()) return Error{options.sandbox_error};
  SandboxPolicy policy = options.sandbox;
  if (options.sandbox_launcher.empty() || policy.mode == SandboxMode::kOff || writable.empty()) return argv;
  const std::string& cache = options.cache_dir;
  HideFromWorkerCode(policy, cache);
  for (const char* kind : {"build", "pch"}) {
    const std::string dir = cache + "/" + kind;
    if (auto st = EnsureDir(dir); !st) return Error{st.error()};
    policy.visible.push_back(dir);
  }
  // A load_inline unit is written to the verification's scratch, under the cache.
  const std::string folder = std::filesystem::path(source_path).parent_path().string();
  if (IsBelow(folder, cache)) policy.visible.push_back(folder);
  policy.private_dir = writable.front();
  policy.writable.insert(policy.writable.end(), writable.begin() + 1, writable.end());
  // Compilers write large intermediate files to TMPDIR: the scratch on disk, not a
  // bounded /dev/shm. Compilers reserve address space freely (cicc, cc1plus), so their
  // bound is on what they write to memory: `#include "/dev/zero"` grew cc1plus by a GB
  // a second until the host ran out.
  policy.private_scratch_bytes = 0;
  policy.limits.address_space_bytes = 0;
  policy.limits.data_bytes = policy.compile_data_bytes;
  // What it writes ends in the compile cache, kept for every client: a 1 GiB module (a
  // static array) passed and stayed there. An honest one is a few MB to a few hundred.
  if (policy.limits.file_size_bytes == 0 || policy.limits.file_size_bytes > kCompileFileBytes)
    policy.limits.file_size_bytes = kCompileFileBytes;
  policy.env_set = {{"HOME", policy.private_dir}, {"TMPDIR", policy.private_dir}};
  auto plan = PlanSandbox(policy, ProbedHost(options.sandbox_launcher), ::geteuid() == 0);
  if (!plan) return Error{plan.error()};
  return SandboxedArgv(options.sandbox_launcher, *plan, argv);
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
  const std::string tmp = cache + "/tmp", refs = cache + "/refs", build = cache + "/build";
  const std::string locks = cache + "/locks";  // the timing locks (engine/verifier.h)
  const std::string lane = options.lane_dir.empty() ? tmp : options.lane_dir;
  for (const auto& d : {tmp, refs, build, locks, lane})
    if (auto st = EnsureDir(d); !st) return Error{"sandbox: " + st.error()};
  auto private_dir = TempDir::Create(lane, "worker");
  if (!private_dir) return Error{"sandbox: no private folder: " + private_dir.error()};
  policy.private_dir = private_dir->path();
  // Nothing else is writable: GPU device files open for writing on a read-only mount,
  // and /dev/shm is the worker's own (private_scratch).
  if (candidate) {
    // Of the cache only the compiled candidates and the worker's own folder: no
    // reference output, store, lock, other worker's folder or verification scratch.
    HideFromWorkerCode(policy, cache);
    policy.visible.push_back(build);
  } else {
    // Task code only, but a client's (kvault serve) or an import's (corpus verify): the
    // lane's own folder (its verifications' scratch, its candidate workers' folders,
    // where the reference offers its outputs) and the reference cache (whose outputs
    // the engine vouches for by hash) are its to write and all it sees of the cache.
    // The store, other lanes' folders, other caches and the engine user's keys are
    // hidden as from candidates: a client's task read the server's ~/.aws and other
    // clients' kernels in the store and told them in its task_error.
    HideFromWorkerCode(policy, cache);
    policy.writable.insert(policy.writable.end(), {lane, refs});
    policy.visible.insert(policy.visible.end(), {lane, refs});
  }
  if (!cpu_backend) policy.limits.address_space_bytes = 0;
  policy.env_set = env_set;
  // Python puts no script folder or working directory first on sys.path (3.11 and later;
  // the zygote's workers check every entry themselves).
  policy.env_set.emplace_back("PYTHONSAFEPATH", "1");

  auto plan = PlanSandbox(policy, ProbedHost(options.sandbox_launcher), ::geteuid() == 0);
  if (!plan) return Error{plan.error()};
  // HOME, TMPDIR and the build caches of PyTorch extensions and Triton: in the worker's
  // own /dev/shm where it has one (bounded, gone with it), else in its private folder.
  // Never shared: a build planted under another candidate's module name would be loaded.
  const bool scratch = plan->policy.private_scratch_bytes > 0;
  const std::string home = scratch ? kPrivateHome : policy.private_dir;
  const std::string tmpdir = scratch ? kPrivateTmp : policy.private_dir;
  for (auto [name, value] : {std::pair<std::string, std::string>{"HOME", home},
                             {"TMPDIR", tmpdir},
                             {"TORCH_EXTENSIONS_DIR", tmpdir + "/torch_extensions"},
                             {"TRITON_CACHE_DIR", tmpdir + "/triton"},
                             {"KVAULT_SANDBOX_SCRATCH_BYTES", std::to_string(plan->policy.private_scratch_bytes)}}) {
    plan->policy.env_set.emplace_back(name, value);
    env_set.emplace_back(name, value);
  }
  env_set.emplace_back("PYTHONSAFEPATH", "1");
  out.argv = SandboxedArgv(options.sandbox_launcher, *plan, argv);
  out.env_set = std::move(env_set);
  out.private_dir = std::move(*private_dir);
  out.layers = plan->layers;
  return out;
}

}  // namespace kvault
