#pragma once
// SandboxPolicy: what confines one worker process (docs/sandbox.md, docs/threat-model.md).
// The engine fills a policy per worker role, the host's capabilities decide which
// layers can be applied (sandbox/capabilities.h), and the launcher (sandbox/launch.h)
// turns both into a command line for the `kvault sandbox-exec` helper, which applies
// exactly the planned layers or fails.
//
//   SandboxPolicy p = PolicyFromEnvironment(/*cpu_backend=*/true);
//   p.hidden.push_back(cache + "/refs");
//   p.writable.push_back(cache + "/tmp");
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/json.h"
#include "util/result.h"

namespace kvault {

// A worker's private scratch (SandboxPolicy::private_scratch_bytes) and, in it, its
// HOME and TMPDIR.
inline constexpr const char* kPrivateScratch = "/dev/shm";
inline constexpr const char* kPrivateHome = "/dev/shm/home";
inline constexpr const char* kPrivateTmp = "/dev/shm/tmp";

// KVAULT_SANDBOX: off (no layer), auto (every layer this host offers; the rest is
// reported as unavailable), strict (a worker does not start unless every layer applies).
enum class SandboxMode { kOff, kAuto, kStrict };

std::string_view ToString(SandboxMode m);
std::optional<SandboxMode> ParseSandboxMode(std::string_view s);

// Resource limits set with setrlimit in the worker. 0 = not set.
struct ResourceLimits {
  uint64_t cpu_seconds = 0;          // RLIMIT_CPU: total CPU time of one worker process
  uint64_t address_space_bytes = 0;  // RLIMIT_AS: only on the CPU backend (GPU drivers reserve huge ranges)
  uint64_t file_size_bytes = 0;      // RLIMIT_FSIZE: largest file a worker may write
  uint64_t open_files = 0;           // RLIMIT_NOFILE
  uint64_t processes = 0;            // RLIMIT_NPROC (the kernel does not enforce it for root)
  // RLIMIT_DATA: compiles of candidate code only. It counts the heap and private writable
  // maps, not the ranges compilers and GPU drivers reserve without writing.
  uint64_t data_bytes = 0;
  bool no_core_dumps = true;         // RLIMIT_CORE = 0
};

struct SandboxPolicy {
  SandboxMode mode = SandboxMode::kOff;  // Default: off (the CLI's default is auto)
  bool pid_namespace = true;      // an init process whose exit kills every process left
  bool network_namespace = true;  // no network interface but a down loopback
  bool mount_namespace = true;    // read-only root, hidden paths, writable exceptions
  bool ipc_namespace = true;      // System V IPC and POSIX message queues of its own
  ResourceLimits limits;
  // Made empty for the worker: a tmpfs over a directory, /dev/null over a file.
  // Paths that do not exist are ignored.
  std::vector<std::string> hidden;
  // Folders below a hidden folder that stay visible as they were (writable or not);
  // the private directory always does. The hidden folder's other entries are gone.
  std::vector<std::string> visible;
  // Size of the worker's own /dev/shm: a fresh tmpfs in its mount namespace, gone with
  // it, holding its HOME and TMPDIR (kPrivateHome, kPrivateTmp). 0: the host's stays
  // (read-only).
  uint64_t private_scratch_bytes = 0;
  // Stay writable under the read-only root (created by the engine if missing).
  std::vector<std::string> writable;
  // The worker's HOME, TMPDIR and working directory (writable). Empty: none.
  std::string private_dir;
  bool scrub_environment = true;
  // Environment names kept when scrubbing; a trailing '*' matches a prefix.
  std::vector<std::string> env_allow;
  // Set after scrubbing (HOME, TMPDIR, PYTHONPATH, ...).
  std::vector<std::pair<std::string, std::string>> env_set;
  // With a user namespace the program is uid 0 there and, by default, loses every
  // capability before exec (so it cannot unmount hidden paths or remount read-write).
  // true keeps them, for one trusted program only: a worker that creates its own
  // namespaces per candidate and drops every capability in each child itself before
  // any candidate code runs. Never for a program that runs candidate code directly.
  bool keep_capabilities = false;
  // The engine's own: the RLIMIT_DATA a compile of candidate code gets (limits.data_bytes
  // there; workers get none). 0: none. Not part of the plan.
  uint64_t compile_data_bytes = 0;
};

// True when the policy asks for any namespace: the helper then enters a user
// namespace first (the others need it), drops capabilities there and installs the
// system-call filter.
inline bool UsesUserNamespace(const SandboxPolicy& p) {
  return p.pid_namespace || p.network_namespace || p.mount_namespace || p.ipc_namespace;
}

// The names every worker keeps: PATH, LANG/LC_*, TZ, device selection
// (CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES), toolkit
// locations (CUDA_HOME, CUDA_PATH, ROCM_PATH, ROCM_HOME, HIP_PATH, LD_LIBRARY_PATH),
// NVIDIA_*, OMP_NUM_THREADS and the KVAULT_* variables the worker reads.
std::vector<std::string> DefaultEnvAllowList();

// KVAULT_SANDBOX (default auto), KVAULT_SANDBOX_MEMORY_MB (RLIMIT_AS on the CPU
// backend and every compile's RLIMIT_DATA; default half the physical memory, for
// compiles at most 16 GiB; 0 = none), KVAULT_SANDBOX_FILE_MB
// (default 16384), KVAULT_SANDBOX_CPU_S (default 7200), KVAULT_SANDBOX_SCRATCH_MB (each
// of a worker's own /dev/shm; default 1024, at least 1). Error names a malformed value.
Result<SandboxPolicy> PolicyFromEnvironment(bool cpu_backend);

// The environment a sandboxed worker gets from `env` (NAME=value entries).
std::vector<std::string> ScrubEnvironment(const std::vector<std::string>& env,
                                          const SandboxPolicy& policy);

Json PolicyToJson(const SandboxPolicy& p);
Result<SandboxPolicy> PolicyFromJson(const Json& j);

}  // namespace kvault
