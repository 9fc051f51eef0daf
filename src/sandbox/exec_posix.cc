#include "sandbox/exec.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sandbox/capabilities.h"
#include "sandbox/policy.h"
#include "sandbox/syscall_filter.h"
#include "util/json_parse.h"

extern char** environ;

namespace kvault {
namespace {

// mount_setattr(2) (Linux 5.12); declared here because glibc headers differ.
struct MountAttr {
  uint64_t attr_set, attr_clr, propagation, userns_fd;
};
constexpr uint64_t kMountAttrReadOnly = 0x1;
constexpr unsigned kAtRecursive = 0x8000;
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "kvault sandbox: %s\n", what.c_str());
  std::fflush(stderr);
  ::_exit(kSandboxSetupFailed);
}

bool WriteSmallFile(const char* path, const std::string& s) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, s.data(), s.size()) == static_cast<ssize_t>(s.size());
  ::close(fd);
  return ok;
}

std::string EnterUserNamespace(int extra_flags) {
  const uid_t uid = ::geteuid();
  const gid_t gid = ::getegid();
  if (::unshare(CLONE_NEWUSER | extra_flags) != 0) return Errno("unshare");
  // Inside, the worker is uid 0 mapped to the engine's own uid: no new privilege
  // outside, and no capability over processes or files of the engine's namespace.
  if (!WriteSmallFile("/proc/self/setgroups", "deny")) return Errno("write setgroups");
  if (!WriteSmallFile("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1"))
    return Errno("write uid_map");
  if (!WriteSmallFile("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1"))
    return Errno("write gid_map");
  return "";
}

std::string SetReadOnly(const char* path, bool read_only) {
  MountAttr attr{};
  (read_only ? attr.attr_set : attr.attr_clr) = kMountAttrReadOnly;
  if (::syscall(SYS_mount_setattr, AT_FDCWD, path, kAtRecursive, &attr, sizeof attr) != 0)
    return Errno(std::string("mount_setattr ") + path);
  return "";
}

std::string HidePath(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return "";  // nothing to hide
  if (S_ISDIR(st.st_mode)) {
    if (::mount("tmpfs", path.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
                "size=4k,mode=000") != 0)
      return Errno("hide " + path);
  } else if (::mount("/dev/null", path.c_str(), nullptr, MS_BIND, nullptr) != 0) {
    return Errno("hide " + path);
  }
  return "";
}

// The worker's scratch: a fresh tmpfs of `bytes` (and at most 64Ki files) on /dev/shm,
// writable by all as /dev/shm is, with home/ and tmp/ (HOME and TMPDIR, worker_sandbox.h).
// It ends with the mount namespace.
std::string MountPrivateScratch(uint64_t bytes) {
  const std::string options = "size=" + std::to_string(bytes) + ",nr_inodes=65536,mode=1777";
  if (::mount("tmpfs", kPrivateScratch, "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0)
    return Errno(std::string("private tmpfs on ") + kPrivateScratch);
  for (const char* dir : {kPrivateHome, kPrivateTmp})
    if (::mkdir(dir, 0700) != 0) return Errno(std::string("mkdir ") + dir);
  return "";
}

// Whether `path` lies strictly below `dir`; `rel` gets the part below it.
bool Below(const std::string& dir, const std::string& path, std::string* rel) {
  namespace fs = std::filesystem;
  const std::string d = fs::path(dir).lexically_normal().string(), q = fs::path(path).lexically_normal().string();
  const std::string prefix = d.ends_with('/') ? d : d + "/";
  if (!q.starts_with(prefix) || q.size() == prefix.size()) return false;
  *rel = q.substr(prefix.size());
  return true;
}

// Hides the folder `dir` but for the folders in `keep` below it: they stay where they
// were, mounted as before (a writable one stays writable). A tmpfs covers `dir`, each
// kept folder is bound back from a descriptor opened before, and the tmpfs is then
// made read-only.
std::string HideAllBut(const std::string& dir, const std::vector<std::string>& keep) {
  std::vector<std::pair<std::string, int>> kept;  // path below dir, O_PATH descriptor
  for (const auto& k : keep) {
    std::string rel;
    if (!Below(dir, k, &rel)) continue;
    int fd = ::open(k.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) kept.emplace_back(rel, fd);
  }
  auto close_all = [&] {
    for (auto& [rel, fd] : kept) ::close(fd);
  };
  constexpr unsigned long kFlags = MS_NOSUID | MS_NODEV | MS_NOEXEC;
  if (::mount("tmpfs", dir.c_str(), "tmpfs", kFlags, "size=64k,mode=711") != 0) {
    close_all();
    return Errno("hide " + dir);
  }
  for (const auto& [rel, fd] : kept) {
    std::string at = dir;
    for (const auto& part : std::filesystem::path(rel)) {
      at += "/" + part.string();
      if (::mkdir(at.c_str(), 0711) != 0 && errno != EEXIST) {
        close_all();
        return Errno("hide " + dir + ": mkdir " + at);
      }
    }
    const std::string from = "/proc/self/fd/" + std::to_string(fd);
    if (::mount(from.c_str(), at.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
      close_all();
      return Errno("hide " + dir + ": keep " + at);
    }
  }
  close_all();
  if (::mount(nullptr, dir.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | kFlags, nullptr) != 0)
    return Errno("hide " + dir + ": read-only");
  return "";
}

// Read-only root, writable exceptions, private /dev/shm, hidden paths. Runs in the new
// mount namespace.
std::string ApplyMounts(const SandboxPolicy& p) {
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return Errno("make mounts private");
  if (auto e = SetReadOnly("/", true); !e.empty()) return e;
  std::vector<std::string> writable = p.writable;
  if (!p.private_dir.empty()) writable.push_back(p.private_dir);
  for (const auto& w : writable) {
    struct stat st;
    if (::stat(w.c_str(), &st) != 0) continue;
    if (::mount(w.c_str(), w.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
      return Errno("bind " + w);
    if (auto e = SetReadOnly(w.c_str(), false); !e.empty()) return e;
  }
  if (p.private_scratch_bytes) {
    if (auto e = MountPrivateScratch(p.private_scratch_bytes); !e.empty()) return e;
  }
  std::vector<std::string> visible = p.visible;
  if (!p.private_dir.empty()) visible.push_back(p.private_dir);
  for (const auto& h : p.hidden) {
    struct stat st;
    std::string rel;
    bool keeps = false;
    for (const auto& v : visible) keeps |= Below(h, v, &rel);
    std::string e = keeps && ::stat(h.c_str(), &st) == 0 && S_ISDIR(st.st_mode) ? HideAllBut(h, visible)
                                                                                 : HidePath(h);
    if (!e.empty()) return e;
  }
  return "";
}

std::string MountFreshProc() {
  if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    return Errno("mount /proc");
  return "";
}

void SetLimit(int resource, uint64_t value, const char* name) {
  rlimit rl{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
  if (::setrlimit(resource, &rl) != 0) Fail(Errno(std::string("setrlimit ") + name));
}

void ApplyLimits(const ResourceLimits& l) {
  if (l.no_core_dumps) SetLimit(RLIMIT_CORE, 0, "RLIMIT_CORE");
  if (l.cpu_seconds) {
    // Soft limit: SIGXCPU; the hard limit one second later: SIGKILL.
    rlimit rl{static_cast<rlim_t>(l.cpu_seconds), static_cast<rlim_t>(l.cpu_seconds + 1)};
    if (::setrlimit(RLIMIT_CPU, &rl) != 0) Fail(Errno("setrlimit RLIMIT_CPU"));
  }
  if (l.address_space_bytes) SetLimit(RLIMIT_AS, l.address_space_bytes, "RLIMIT_AS");
  if (l.file_size_bytes) SetLimit(RLIMIT_FSIZE, l.file_size_bytes, "RLIMIT_FSIZE");
  if (l.open_files) SetLimit(RLIMIT_NOFILE, l.open_files, "RLIMIT_NOFILE");
  if (l.processes) SetLimit(RLIMIT_NPROC, l.processes, "RLIMIT_NPROC");
  if (l.data_bytes) SetLimit(RLIMIT_DATA, l.data_bytes, "RLIMIT_DATA");
}

void CloseRange(unsigned first, unsigned last) {
  if (first > last) return;
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, first, last, 0) == 0) return;
#endif
  for (unsigned fd = first; fd <= last && fd < 65536; ++fd) ::close(static_cast<int>(fd));
}

// Closes every descriptor but stderr and `keep` (> 2): no copy of the protocol pipes
// may outlive PROGRAM, or the engine would not see them close.
void CloseAllBut(int keep) {
  CloseRange(0, 1);
  CloseRange(3, static_cast<unsigned>(keep) - 1);
  CloseRange(static_cast<unsigned>(keep) + 1, ~0u);
}

// The highest capability number this kernel knows. 63 (every bit a capability set
// can hold) when /proc does not say: dropping numbers the kernel does not know only
// costs an EINVAL, which DropEveryCapability ignores.
int LastCapability() {
  std::ifstream f("/proc/sys/kernel/cap_last_cap");
  int last = -1;
  if (f >> last && last >= 0 && last <= 63) return last;
  return 63;
}

// Leaves the calling process, and everything it execs, without any capability in
// the user namespace. uid 0 inside the namespace otherwise holds every capability
// there, and with CAP_SYS_ADMIN it can unmount a hidden path or remount the root
// read-write, undoing the mount layers. In this order:
//  - the ambient set, which would otherwise survive execve;
//  - the bounding set, while CAP_SETPCAP (needed to drop from it) is still held. An
//    empty bounding set is what stops execve from handing uid 0 a full set again;
//  - no_new_privs, so that no setuid or file-capability binary gains anything back;
//  - effective, permitted and inheritable last.
// Returns "" or what failed.
std::string DropEveryCapability() {
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
    return Errno("clear the ambient capabilities");
  for (int cap = 0, last = LastCapability(); cap <= last; ++cap) {
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
      return Errno("drop capability " + std::to_string(cap) + " from the bounding set");
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return Errno("set no_new_privs");
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capset, &header, none) != 0) return Errno("capset");
  // Read back: a bit left anywhere must not pass. The bounding set up to 63, since a
  // bit left there comes back with the next exec.
  __user_cap_data_struct now[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capget, &header, now) != 0) return Errno("capget");
  for (const auto& d : now)
    if (d.effective || d.permitted || d.inheritable) return "capabilities still set after capset";
  for (int cap = 0; cap <= 63; ++cap)
    if (::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1)
      return "capability " + std::to_string(cap) + " still in the bounding set";
  return "";
}

// What the helper does beyond the policy's own fields.
struct ExecSteps {
  bool fresh_proc = false;         // init mounts a /proc of the PID namespace
  bool drop_capabilities = false;  // the program is uid 0 of a user namespace the helper entered
  bool syscall_filter = false;     // no user namespaces for the program (syscall_filter.h)
};

// Limits, environment, working directory, capabilities, the system-call filter, then
// exec. Never returns.
[[noreturn]] void ExecProgram(const SandboxPolicy& p, char** argv, const ExecSteps& steps) {
  ApplyLimits(p.limits);
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
  env = ScrubEnvironment(env, p);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  if (!p.private_dir.empty() && ::chdir(p.private_dir.c_str()) != 0)
    Fail(Errno("chdir " + p.private_dir));
  // PATH lookup uses the scrubbed PATH, as the unsandboxed start would.
  for (const auto& e : env)
    if (e.starts_with("PATH=")) ::setenv("PATH", e.c_str() + 5, 1);
  // Last, so that every step above still had the capabilities it may need.
  if (steps.drop_capabilities) {
    if (auto e = DropEveryCapability(); !e.empty()) Fail("capabilities: " + e);
  }
  if (steps.syscall_filter) {
    if (auto e = InstallUserNamespaceFilter(); !e.empty()) Fail("syscall filter: " + e);
  }
  ::execvpe(argv[0], argv, envp.data());
  Fail(Errno(std::string("cannot start '") + argv[0] + "'"));
}

// Exits the way `status` (a waitpid status) says a process ended.
[[noreturn]] void MirrorStatus(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    ::signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
    ::kill(::getpid(), sig);
    ::_exit(128 + sig);  // a signal that does not kill by default
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : kSandboxSetupFailed);
}

// pid 1 of the namespace: start PROGRAM, reap everything, report PROGRAM's status on
// `status_fd` and exit (which kills whatever PROGRAM left behind).
[[noreturn]] void RunInit(const SandboxPolicy& p, char** argv, int status_fd, const ExecSteps& steps) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (steps.fresh_proc) {
    if (auto e = MountFreshProc(); !e.empty()) Fail(e);
  }
  pid_t program = ::fork();
  if (program < 0) Fail(Errno("fork"));
  if (program == 0) {
    ::close(status_fd);
    ExecProgram(p, argv, steps);
  }
  CloseAllBut(status_fd);
  while (true) {
    int status = 0;
    pid_t r = ::waitpid(-1, &status, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) ::_exit(kSandboxSetupFailed);
    if (r == program) {
      (void)!::write(status_fd, &status, sizeof status);
      ::_exit(0);
    }
  }
}

int Run(const SandboxPolicy& p, char** argv, ExecSteps steps) {
  // An engine killed with SIGKILL takes its sandboxes with it (init follows the helper).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  const bool namespaces = UsesUserNamespace(p);
  if (namespaces) {
    int flags = (p.network_namespace ? CLONE_NEWNET : 0) | (p.mount_namespace ? CLONE_NEWNS : 0) |
                (p.pid_namespace ? CLONE_NEWPID : 0) | (p.ipc_namespace ? CLONE_NEWIPC : 0);
    if (auto e = EnterUserNamespace(flags); !e.empty()) Fail("user namespace: " + e);
  }
  // Only the capabilities of the user namespace entered above are ours to drop; without
  // it PROGRAM runs with the engine's own, as an unsandboxed start would.
  steps.drop_capabilities = namespaces && !p.keep_capabilities;
  steps.syscall_filter = steps.syscall_filter && namespaces;
  if (p.mount_namespace) {
    if (auto e = ApplyMounts(p); !e.empty()) Fail("mounts: " + e);
  }
  if (!p.pid_namespace) ExecProgram(p, argv, steps);

  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) Fail(Errno("pipe"));
  pid_t init = ::fork();
  if (init < 0) Fail(Errno("fork"));
  if (init == 0) {
    ::close(status_pipe[0]);
    RunInit(p, argv, status_pipe[1], steps);
  }
  ::close(status_pipe[1]);
  CloseAllBut(status_pipe[0]);
  int init_status = 0;
  while (::waitpid(init, &init_status, 0) < 0 && errno == EINTR) {
  }
  int program_status = 0;
  ssize_t n = ::read(status_pipe[0], &program_status, sizeof program_status);
  if (n == static_cast<ssize_t>(sizeof program_status)) MirrorStatus(program_status);
  MirrorStatus(init_status);  // init itself failed or was killed
}

// Everything `fd` gives until end of file; closes it.
std::string ReadToEnd(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

// Tries each layer in a throwaway child; prints the JSON described in exec.h.
int Probe() {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return kSandboxSetupFailed;
  pid_t child = ::fork();
  if (child == 0) {
    ::close(pipe_fds[0]);
    auto report = [&](const char* layer, const std::string& why) {
      std::string line = std::string(layer) + "\t" + why + "\n";
      (void)!::write(pipe_fds[1], line.data(), line.size());
    };
    std::string e = EnterUserNamespace(CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWPID);
    for (const char* l : {"user_namespace", "network_namespace", "mount_namespace", "pid_namespace"})
      report(l, e);
    if (!e.empty()) ::_exit(0);
    report("ipc_namespace", ::unshare(CLONE_NEWIPC) == 0 ? "" : Errno("unshare(CLONE_NEWIPC)"));
    e = ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 ? "" : Errno("make mounts private");
    if (e.empty()) e = SetReadOnly("/", true);
    if (e.empty()) e = SetReadOnly("/dev", false);
    report("read_only_root", e);
    e = ::mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=4k") == 0 ? "" : Errno("mount tmpfs");
    report("hidden_paths", e);
    pid_t init = ::fork();
    if (init == 0) ::_exit(MountFreshProc().empty() ? 0 : 1);
    int st = 0;
    ::waitpid(init, &st, 0);
    report("fresh_proc", WIFEXITED(st) && WEXITSTATUS(st) == 0
                             ? ""
                             : "mounting a new /proc is refused here (a container that masks parts of /proc)");
    int filter_pipe[2];
    if (::pipe(filter_pipe) == 0) {
      pid_t filtered = ::fork();
      if (filtered == 0) {
        ::close(filter_pipe[0]);
        std::string why = InstallUserNamespaceFilter();
        if (why.empty() && ::unshare(CLONE_NEWUSER) == 0) why = "the filter let a user namespace through";
        (void)!::write(filter_pipe[1], why.data(), why.size());
        ::_exit(0);
      }
      ::close(filter_pipe[1]);
      std::string why = ReadToEnd(filter_pipe[0]);
      ::waitpid(filtered, &st, 0);
      report("syscall_filter", WIFEXITED(st) ? why : "the probe of the filter died");
    }
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string out = ReadToEnd(pipe_fds[0]);
  int st = 0;
  ::waitpid(child, &st, 0);
  Json j = Json::object();
  for (const char* l : kProbedLayers) j[l] = "not tried: an earlier layer failed";
  size_t pos = 0;
  while (pos < out.size()) {
    size_t nl = out.find('\n', pos), tab = out.find('\t', pos);
    if (nl == std::string::npos || tab == std::string::npos || tab > nl) break;
    j[out.substr(pos, tab - pos)] = out.substr(tab + 1, nl - tab - 1);
    pos = nl + 1;
  }
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

}  // namespace

int SandboxExecMain(int argc, char** argv) {
  if (argc == 1 && std::string(argv[0]) == "--probe") return Probe();
  if (argc < 3 || std::string(argv[1]) != "--")
    Fail("usage: kvault sandbox-exec PLAN -- PROGRAM [ARGS...] | kvault sandbox-exec --probe");
  auto json = ParseJson(argv[0], 16);
  if (!json) Fail("sandbox plan is not JSON: " + json.error());
  auto plan = PolicyFromJson(*json);
  if (!plan) Fail(plan.error());
  ExecSteps steps;
  steps.fresh_proc = json->value("fresh_proc", false);
  steps.syscall_filter = json->value("syscall_filter", false);
  return Run(*plan, argv + 2, steps);
}

}  // namespace kvault
