#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <set>
#include <thread>

#include "util/child_process.h"
#include "util/strings.h"

extern char** environ;

namespace kvault {
namespace {

// Children started and not yet reaped, for KillAllGroups. A child leaves it after it
// has terminated and before it is reaped, so its pid (the group id) cannot have been
// reused while it is listed.
std::mutex live_mu;
std::atomic<bool> stopping{false};  // StopAll
std::set<pid_t>& LiveChildren() {
  static std::set<pid_t> live;
  return live;
}

constexpr int kDefaultedSignals[] = {SIGPIPE, SIGINT,  SIGTERM, SIGQUIT, SIGHUP,  SIGCHLD,
                                     SIGUSR1, SIGUSR2, SIGALRM, SIGTSTP, SIGTTIN, SIGTTOU,
                                     SIGXFSZ};

std::vector<std::string> BuildEnvironment(const ChildProcess::Spec& spec) {
  std::vector<std::string> env;
  if (spec.inherit_env) {
    for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
  }
  for (const auto& [name, value] : spec.env_set) {
    std::string prefix = name + "=";
    auto it = std::find_if(env.begin(), env.end(),
                           [&](const std::string& e) { return e.starts_with(prefix); });
    if (it != env.end()) {
      *it = prefix + value;
    } else {
      env.push_back(prefix + value);
    }
  }
  return env;
}

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// Resolves argv[0] against the PATH the child will see.
Result<std::string> ResolveProgram(const std::string& name, const std::vector<std::string>& env) {
  if (name.find('/') != std::string::npos) return name;
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const auto& e : env) {
    if (e.starts_with("PATH=")) path = e.substr(5);
  }
  for (const auto& dir : Split(path, ':')) {
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (IsExecutableFile(candidate)) return candidate;
  }
  return Error{"cannot start '" + name + "': not found in PATH"};
}

std::atomic<bool> exit_fd_disabled{false};

int OpenExitFd(pid_t pid) {
  if (exit_fd_disabled.load()) return -1;
#ifdef SYS_pidfd_open
  long fd = ::syscall(SYS_pidfd_open, pid, 0);
  if (fd >= 0) {
    ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
    return static_cast<int>(fd);
  }
#endif
  return -1;
}

// Runs `start` on one thread that lives as long as the process and returns its result.
// The kernel ties a child's parent-death signal (PR_SET_PDEATHSIG, which the sandbox
// helper and the worker zygote's processes set) to the *thread* that started the
// child, not to the process (prctl(2)): a child started by a short-lived thread would
// be killed when that thread ends. Started from here, every child outlives whichever
// thread asked for it and still dies with this process.
int OnSpawnerThread(std::function<int()> start) {
  struct Spawner {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::packaged_task<int()>*> queue;
  };
  static Spawner* const spawner = [] {
    auto* s = new Spawner;  // never destroyed: the thread runs past static destructors
    std::thread([s] {
      sigset_t all;
      sigfillset(&all);
      pthread_sigmask(SIG_BLOCK, &all, nullptr);  // signals are for the other threads
      while (true) {
        std::packaged_task<int()>* task;
        {
          std::unique_lock<std::mutex> lock(s->mu);
          s->cv.wait(lock, [s] { return !s->queue.empty(); });
          task = s->queue.front();
          s->queue.pop_front();
        }
        (*task)();
      }
    }).detach();
    return s;
  }();
  std::packaged_task<int()> task(std::move(start));
  std::future<int> result = task.get_future();
  {
    std::lock_guard<std::mutex> lock(spawner->mu);
    spawner->queue.push_back(&task);
  }
  spawner->cv.notify_one();
  return result.get();
}

// posix_spawn attributes and file actions, destroyed on scope exit.
struct SpawnSetup {
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  std::vector<UniqueFd> staged;  // high-numbered copies of the parent fds
  SpawnSetup() {
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_init(&actions);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
};

}  // namespace

Result<ChildProcess> ChildProcess::Spawn(const Spec& spec) {
  if (spec.argv.empty()) return Error{"cannot start a command with an empty argv"};
  const std::string& name = spec.argv[0];
  if (stopping.load()) return Error{"'" + name + "' not started: stopping"};
  std::vector<std::string> env = BuildEnvironment(spec);
  auto program = ResolveProgram(name, env);
  if (!program) return Error{program.error()};
  if (!spec.cwd.empty()) {
    struct stat st;
    if (::stat(spec.cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Error{"cannot start '" + name + "': working directory " + spec.cwd +
                   " is not a directory"};
    }
  }

  SpawnSetup s;
  sigset_t empty, defaulted;
  sigemptyset(&empty);
  sigemptyset(&defaulted);
  for (int sig : kDefaultedSignals) sigaddset(&defaulted, sig);
  posix_spawnattr_setflags(&s.attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                        POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&s.attr, 0);  // a new group whose id is the child's pid
  posix_spawnattr_setsigmask(&s.attr, &empty);
  posix_spawnattr_setsigdefault(&s.attr, &defaulted);

  // Copy every source above every target first, so that no dup2 below clobbers a
  // source that a later mapping still needs; dup2 then clears FD_CLOEXEC on targets.
  int max_child_fd = 2;
  for (const auto& m : spec.fds) max_child_fd = std::max(max_child_fd, m.child_fd);
  bool mapped[3] = {false, false, false};
  for (const auto& m : spec.fds) {
    UniqueFd high(::fcntl(m.parent_fd, F_DUPFD_CLOEXEC, max_child_fd + 1));
    if (!high) return Error{"cannot start '" + name + "': " + std::strerror(errno)};
    posix_spawn_file_actions_adddup2(&s.actions, high.get(), m.child_fd);
    if (m.child_fd < 3) mapped[m.child_fd] = true;
    s.staged.push_back(std::move(high));
  }
  for (int fd = 0; fd < 3; ++fd) {
    if (!mapped[fd]) posix_spawn_file_actions_addopen(&s.actions, fd, "/dev/null", O_RDWR, 0);
  }
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  posix_spawn_file_actions_addclosefrom_np(&s.actions, max_child_fd + 1);
#endif
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&s.actions, spec.cwd.c_str());

  std::vector<char*> argv, envp;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  pid_t pid = -1;
  int rc = OnSpawnerThread(
      [&] { return ::posix_spawn(&pid, program->c_str(), &s.actions, &s.attr, argv.data(), envp.data()); });
  if (rc != 0) return Error{"cannot start '" + name + "': " + std::strerror(rc)};
  {
    std::lock_guard<std::mutex> lock(live_mu);
    LiveChildren().insert(pid);
  }
  return ChildProcess(pid, UniqueFd(OpenExitFd(pid)));
}

void ChildProcess::DisableExitFdForTesting(bool disable) { exit_fd_disabled.store(disable); }

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      reaped_(other.reaped_),
      status_(other.status_),
      exit_fd_(std::move(other.exit_fd_)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    Release();
    pid_ = std::exchange(other.pid_, -1);
    reaped_ = other.reaped_;
    status_ = other.status_;
    exit_fd_ = std::move(other.exit_fd_);
  }
  return *this;
}

ChildProcess::~ChildProcess() { Release(); }

void ChildProcess::Release() {
  if (pid_ > 0 && !reaped_) {
    KillGroup();
    Wait();
  }
  pid_ = -1;
}

bool ChildProcess::HasExited() const {
  if (reaped_) return true;
  siginfo_t info;
  std::memset(&info, 0, sizeof info);
  while (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    if (errno != EINTR) return true;  // ECHILD: nothing left to wait for
  }
  return info.si_pid != 0;
}

void ChildProcess::KillGroup() {
  if (pid_ <= 0 || reaped_) return;
  // Until Wait() reaps the child, its pid (and so the group id) cannot be reused.
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);  // in case the child left its group
}

void ChildProcess::KillAllGroups() {
  std::lock_guard<std::mutex> lock(live_mu);
  for (pid_t pid : LiveChildren()) {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
  }
}

void ChildProcess::StopAll() {
  stopping.store(true);
  KillAllGroups();
}

bool ChildProcess::Stopping() { return stopping.load(); }

void ChildProcess::ResetStopForTesting() { stopping.store(false); }

ExitStatus ChildProcess::Wait() {
  if (reaped_ || pid_ <= 0) return status_;
  siginfo_t info;
  while (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
  }
  {
    std::lock_guard<std::mutex> lock(live_mu);
    LiveChildren().erase(pid_);
  }
  int raw = 0;
  while (::waitpid(pid_, &raw, 0) < 0) {
    if (errno != EINTR) {  // ECHILD: someone else reaped it; nothing is known
      reaped_ = true;
      exit_fd_.reset();
      return status_;
    }
  }
  if (WIFEXITED(raw)) {
    status_.exit_code = WEXITSTATUS(raw);
  } else if (WIFSIGNALED(raw)) {
    status_.term_signal = WTERMSIG(raw);
  }
  reaped_ = true;
  exit_fd_.reset();
  return status_;
}

}  // namespace kvault
