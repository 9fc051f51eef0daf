#pragma once
// From a requested policy and the host's capabilities to the exact plan the helper
// applies, the report of every layer (applied, unavailable with the reason, or off),
// and the helper's command line. Pure functions: the unit tests run them without
// spawning anything.
//
//   auto host = ProbeHost(launcher);
//   auto plan = PlanSandbox(policy, *host);      // Error in strict mode if a layer is missing
//   argv = SandboxedArgv(launcher, *plan, argv);
#include <string>
#include <vector>

#include "sandbox/capabilities.h"
#include "sandbox/policy.h"

namespace kvault {

struct SandboxPlan {
  SandboxPolicy policy;   // the layers that will be applied (unavailable ones removed)
  bool fresh_proc = false;
  bool syscall_filter = false;  // no user namespaces for the program (sandbox/syscall_filter.h)
  // One row per layer: {"layer", "state": "applied"|"unavailable"|"off", "detail"}.
  Json layers = Json::array();
};

// mode off: nothing applied, every layer "off". auto: what the host lacks is dropped
// and reported "unavailable". strict: Error naming every missing layer.
Result<SandboxPlan> PlanSandbox(const SandboxPolicy& requested, const HostCapabilities& host,
                                bool running_as_root);

// {launcher, "sandbox-exec", <plan JSON>, "--", argv...}; argv itself when the plan is off.
std::vector<std::string> SandboxedArgv(const std::string& launcher, const SandboxPlan& plan,
                                       const std::vector<std::string>& argv);

}  // namespace kvault
