#include "util/process_cpu.h"

#include <dirent.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

#include "util/process_tree.h"

namespace kvault {
namespace {

// A process's user and system time (/proc/<pid>/stat fields 14 and 15) and its reaped
// children's (16 and 17), in nanoseconds; false when the file cannot be read.
bool StatTimesNs(pid_t pid, int64_t* own, int64_t* children) {
  const std::vector<std::string> fields = ProcStatFields(pid);  // [n]: field n + 3
  if (fields.size() < 15) return false;
  long long ticks_of[4];
  for (int i = 0; i < 4; ++i) {
    char* end = nullptr;
    ticks_of[i] = std::strtoll(fields[11 + i].c_str(), &end, 10);
    if (end == fields[11 + i].c_str()) return false;
  }
  static const long ticks = std::max(1L, ::sysconf(_SC_CLK_TCK));
  *own = (ticks_of[0] + ticks_of[1]) * (1000000000LL / ticks);
  *children = (ticks_of[2] + ticks_of[3]) * (1000000000LL / ticks);
  return true;
}

void ReadThreads(pid_t pid, std::map<pid_t, int64_t>* threads) {
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = ::opendir(tasks.c_str());
  if (dir == nullptr) return;
  while (dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    const long tid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0') continue;
    std::ifstream in(tasks + "/" + e->d_name + "/schedstat");
    long long on_cpu = 0;
    if (in >> on_cpu) (*threads)[static_cast<pid_t>(tid)] = on_cpu;
  }
  ::closedir(dir);
}

}  // namespace

ProcessCpu ReadProcessCpu(const std::vector<pid_t>& pids) {
  ProcessCpu cpu;
  for (pid_t pid : pids) {
    if (pid <= 0) continue;
    int64_t own = 0, children = 0;
    if (!StatTimesNs(pid, &own, &children)) continue;
    // The process clock counts to the nanosecond; a zombie (exited, not yet reaped) has
    // none, but its stat still holds what it ran.
    clockid_t clock;
    timespec ts{};
    if (::clock_getcpuclockid(pid, &clock) == 0 && ::clock_gettime(clock, &ts) == 0)
      own = static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
    cpu.processes_ns[pid] = own + children;
    ReadThreads(pid, &cpu.threads_ns);
  }
  return cpu;
}

double OtherThreadsMs(const ProcessCpu& before, const ProcessCpu& after) {
  auto delta = [](const std::map<pid_t, int64_t>& was, pid_t id, int64_t now) {
    auto it = was.find(id);
    return std::max<int64_t>(0, now - (it == was.end() ? 0 : it->second));
  };
  int64_t total = 0, busiest = 0;
  for (const auto& [pid, ns] : after.processes_ns) total += delta(before.processes_ns, pid, ns);
  // Only a thread that was there before can be the request loop: a thread or a process
  // born in the window (a zombie's task included) is counted whatever it ran.
  for (const auto& [tid, ns] : after.threads_ns)
    if (before.threads_ns.count(tid)) busiest = std::max(busiest, delta(before.threads_ns, tid, ns));
  return static_cast<double>(std::max<int64_t>(0, total - busiest)) / 1e6;
}

int UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

}  // namespace kvault
