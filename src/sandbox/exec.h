#pragma once
// The sandbox helper, run as `kvault sandbox-exec PLAN -- PROGRAM ARGS...` (the
// launcher, sandbox/launch.h, writes that command line) or `kvault sandbox-exec
// --probe`. It applies exactly the layers of PLAN (a PolicyToJson object) and execs
// PROGRAM, or exits with kSandboxSetupFailed and one line on stderr naming the layer
// that failed: it never runs PROGRAM with less confinement than planned. Inside a user
// namespace PROGRAM starts without any capability (and with no_new_privs) unless the
// plan says keep_capabilities.
//
// Process layout with a PID namespace (docs/sandbox.md):
//   helper (engine's process group) -> init (pid 1 of the namespace) -> PROGRAM (pid 2)
// The helper exits the way PROGRAM exited (same exit code, or the same signal); init
// reaps orphans and, when PROGRAM ends, exits, which kills everything left inside.
//
// --probe prints one JSON object {"layer": "" or "why it is unavailable", ...} for
// user_namespace, network_namespace, mount_namespace, pid_namespace, read_only_root,
// hidden_paths, fresh_proc and syscall_filter, tried in a throwaway child.

namespace kvault {

inline constexpr int kSandboxSetupFailed = 125;

// argv[0] is the first argument after "sandbox-exec". Returns the exit code (exec
// replaces the process on success).
int SandboxExecMain(int argc, char** argv);

}  // namespace kvault
