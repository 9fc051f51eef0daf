#pragma once
// Which sandbox layers this host allows, found by running the helper's --probe
// (sandbox/exec.h) once per launcher and process. Thread-safe.
#include <string>

#include "util/json.h"
#include "util/result.h"

namespace kvault {

// The layers `sandbox-exec --probe` reports, in its order.
inline constexpr const char* kProbedLayers[] = {"user_namespace", "network_namespace", "mount_namespace",
                                                "pid_namespace",  "read_only_root",    "hidden_paths",
                                                "fresh_proc",     "syscall_filter",    "ipc_namespace"};

struct HostCapabilities {
  // layer name -> "" when available, else one line saying why not.
  Json layers = Json::object();
  bool Has(const std::string& layer) const;
  std::string Why(const std::string& layer) const;
};

// Runs `launcher sandbox-exec --probe` (once per launcher; later calls return the
// first answer). Error when the helper cannot be run or answers nonsense.
Result<HostCapabilities> ProbeHost(const std::string& launcher);

// This binary (/proc/self/exe), the usual launcher.
std::string SelfExecutable();

// Whether this program answers `sandbox-exec` (kvault's main says so first thing).
// Another program that links the engine (a test binary) must not name itself as the
// launcher: it would run its own main again for every worker, each starting more.
void DeclareSandboxLauncher();
bool SelfIsSandboxLauncher();

}  // namespace kvault
