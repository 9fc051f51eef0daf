#include "sandbox/launch.h"

#include <utility>

#include "util/strings.h"

namespace kvault {
namespace {

// {state, detail} of the "capabilities" row. The helper drops capabilities only inside
// the user namespace it enters, which it does when any namespace layer survived
// planning (sandbox/exec_posix.cc, Run).
std::pair<std::string, std::string> CapabilitiesLayer(const SandboxPolicy& p, bool namespaces_requested) {
  const bool user_namespace = UsesUserNamespace(p);
  if (!user_namespace && namespaces_requested)
    return {"unavailable", "needs the user namespace; the worker has the engine's own capabilities"};
  if (!user_namespace) return {"off", "not requested (no user namespace)"};
  if (p.keep_capabilities)
    return {"applied",
            "kept by this trusted program to create per-candidate namespaces; it drops every "
            "capability in each child before candidate code runs"};
  return {"applied", "every capability dropped, no_new_privs: mounts cannot be undone"};
}

}  // namespace

Result<SandboxPlan> PlanSandbox(const SandboxPolicy& requested, const HostCapabilities& host,
                                bool running_as_root) {
  SandboxPlan plan;
  plan.policy = requested;
  SandboxPolicy& p = plan.policy;
  const bool off = p.mode == SandboxMode::kOff;
  std::vector<std::string> missing;
  auto row = [&](const std::string& layer, const std::string& state, const std::string& detail) {
    plan.layers.push_back(Json{{"layer", layer}, {"state", state}, {"detail", detail}});
  };
  row("process_group", "applied", "the worker and its children are killed together");
  if (off) {
    p.pid_namespace = p.network_namespace = p.mount_namespace = p.ipc_namespace = false;
    p.scrub_environment = false;
    p.limits = ResourceLimits{};
    p.limits.no_core_dumps = false;
    p.hidden.clear();
    p.visible.clear();
    p.private_scratch_bytes = 0;
    p.private_dir.clear();
    for (const char* l : {"user_namespace", "pid_namespace", "network_namespace", "ipc_namespace",
                          "mount_namespace", "read_only_root", "hidden_paths", "private_scratch", "capabilities",
                          "syscall_filter", "private_dir", "scrubbed_environment",
                          "rlimit_cpu", "rlimit_as", "rlimit_fsize", "rlimit_nofile",
                          "rlimit_nproc", "rlimit_core"})
      row(l, "off", "KVAULT_SANDBOX=off");
    return plan;
  }
  // A layer the policy asks for: applied when the host has everything it needs.
  auto layer = [&](const std::string& name, bool wanted, std::vector<std::string> needs,
                   const std::string& what) {
    if (!wanted) {
      row(name, "off", "not requested");
      return false;
    }
    for (const auto& n : needs) {
      if (!host.Has(n)) {
        row(name, "unavailable", n + ": " + host.Why(n));
        missing.push_back(name + " (" + n + ": " + host.Why(n) + ")");
        return false;
      }
    }
    row(name, "applied", what);
    return true;
  };
  const bool any_ns = UsesUserNamespace(p);
  layer("user_namespace", any_ns, {"user_namespace"},
        "uid 0 inside maps to the engine's uid; no capability outside");
  p.pid_namespace = layer("pid_namespace", p.pid_namespace, {"user_namespace", "pid_namespace"},
                          "an init process; when the worker ends, everything it started is killed");
  p.network_namespace = layer("network_namespace", p.network_namespace,
                              {"user_namespace", "network_namespace"}, "no network interfaces");
  p.ipc_namespace = layer("ipc_namespace", p.ipc_namespace, {"user_namespace", "ipc_namespace"},
                          "System V IPC and POSIX message queues of its own, gone when it ends");
  const bool mounts = layer("mount_namespace", p.mount_namespace, {"user_namespace", "mount_namespace"},
                            "a private mount table");
  std::vector<std::string> writable = p.writable;
  if (!p.private_dir.empty()) writable.push_back("the private directory");
  if (p.private_scratch_bytes) writable.push_back(std::string("its own ") + kPrivateScratch);
  const bool ro = layer("read_only_root", mounts, {"read_only_root"},
                        writable.empty() ? "everything read-only" : "everything read-only but: " + Join(writable, ", "));
  const bool hidden = layer("hidden_paths", mounts && ro, {"hidden_paths"},
                            p.hidden.empty() ? "nothing to hide"
                                             : "emptied: " + Join(p.hidden, ", ") +
                                                   (p.visible.empty() ? "" : " (kept: " + Join(p.visible, ", ") + ")"));
  p.mount_namespace = mounts && ro && hidden;
  if (!p.mount_namespace) {
    p.hidden.clear();
    p.visible.clear();
  }
  // Plain tmpfs mounts: the mount layers are all it needs.
  if (p.private_scratch_bytes == 0) {
    row("private_scratch", "off", "not requested");
  } else if (!p.mount_namespace) {
    row("private_scratch", "unavailable", "needs the mount namespace: /dev/shm stays the host's (read-only)");
    p.private_scratch_bytes = 0;
  } else {
    row("private_scratch", "applied",
        std::string(kPrivateScratch) + ": a tmpfs of " + FormatBytes(p.private_scratch_bytes) +
            " of its own (HOME " + kPrivateHome + ", TMPDIR " + kPrivateTmp + "), gone when it ends");
  }
  plan.fresh_proc = p.pid_namespace && p.mount_namespace && host.Has("fresh_proc");
  if (!p.pid_namespace) {
    row("fresh_proc", "off", "needs the pid namespace");
  } else if (plan.fresh_proc) {
    row("fresh_proc", "applied", "/proc shows only the sandbox's processes");
  } else {
    row("fresh_proc", "unavailable", host.Why("fresh_proc") +
                                         "; /proc shows other processes, but the user namespace "
                                         "denies access to their files");
  }
  const auto [caps_state, caps_detail] = CapabilitiesLayer(p, any_ns);
  row("capabilities", caps_state, caps_detail);
  // Installed by the helper after entering the user namespace, so only with one.
  const bool user_namespace = UsesUserNamespace(p);
  plan.syscall_filter = user_namespace && host.Has("syscall_filter");
  if (!user_namespace) {
    row("syscall_filter", any_ns ? "unavailable" : "off", "needs the user namespace");
  } else if (plan.syscall_filter) {
    row("syscall_filter", "applied", "seccomp: no new user namespaces (unshare/clone with CLONE_NEWUSER "
                                     "refused, clone3 ENOSYS), no other system-call ABI");
  } else {
    row("syscall_filter", "unavailable", host.Why("syscall_filter"));
    missing.push_back("syscall_filter (" + host.Why("syscall_filter") + ")");
  }
  row("private_dir", p.private_dir.empty() ? "off" : "applied",
      p.private_dir.empty() ? "not requested"
                            : (p.private_scratch_bytes ? "working directory " : "HOME, TMPDIR and working directory ") +
                                  p.private_dir);
  row("scrubbed_environment", p.scrub_environment ? "applied" : "off",
      p.scrub_environment ? "only: " + Join(p.env_allow, " ") : "not requested");
  const ResourceLimits& l = p.limits;
  auto limit = [&](const std::string& name, uint64_t v, const std::string& text, const std::string& why_not) {
    row(name, v ? "applied" : "off", v ? text : why_not);
  };
  limit("rlimit_cpu", l.cpu_seconds, std::to_string(l.cpu_seconds) + " s of CPU time per process", "not requested");
  limit("rlimit_as", l.address_space_bytes, FormatBytes(l.address_space_bytes) + " of address space",
        "not set: GPU drivers reserve huge address ranges (GPU backends), or KVAULT_SANDBOX_MEMORY_MB=0");
  limit("rlimit_fsize", l.file_size_bytes, FormatBytes(l.file_size_bytes) + " per file written", "not requested");
  limit("rlimit_nofile", l.open_files, std::to_string(l.open_files) + " open files", "not requested");
  if (l.processes && running_as_root) {
    row("rlimit_nproc", "unavailable",
        "set to " + std::to_string(l.processes) +
            " but the kernel does not enforce it for root; the pid namespace and the "
            "process-group kill contain fork bombs");
  } else {
    limit("rlimit_nproc", l.processes, std::to_string(l.processes) + " processes of this user", "not requested");
  }
  row("rlimit_core", l.no_core_dumps ? "applied" : "off", l.no_core_dumps ? "no core dumps" : "not requested");
  if (p.mode == SandboxMode::kStrict && !missing.empty())
    return Error{"KVAULT_SANDBOX=strict but this host cannot apply: " + Join(missing, "; ")};
  return plan;
}

std::vector<std::string> SandboxedArgv(const std::string& launcher, const SandboxPlan& plan,
                                       const std::vector<std::string>& argv) {
  if (plan.policy.mode == SandboxMode::kOff) return argv;
  Json j = PolicyToJson(plan.policy);
  j["fresh_proc"] = plan.fresh_proc;
  j["syscall_filter"] = plan.syscall_filter;
  std::vector<std::string> out = {launcher, "sandbox-exec", j.dump(), "--"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

}  // namespace kvault
