#pragma once
// CPU time of a set of processes, read from outside them (/proc and the kernel's
// process clocks), so that what a process says of itself is not needed:
//
//   ProcessCpu before = ReadProcessCpu(pids);
//   ... a request ...
//   double others = OtherThreadsMs(before, ReadProcessCpu(pids));
//
// A process's total counts every thread it ran, those that have exited too (its CPU
// clock, clock_getcpuclockid; a zombie's from its /proc stat, in clock ticks), and the
// children it has reaped (cutime and cstime, in clock ticks). Each live thread's own
// time comes from /proc/<pid>/task/<tid>/schedstat (nanoseconds on the CPU). A process
// that exits and is reaped between two readings by a process outside the set takes its
// time with it. Processes or threads that cannot be read are skipped.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <vector>

namespace kvault {

struct ProcessCpu {
  std::map<pid_t, int64_t> processes_ns;  // pid -> its total (threads, exited threads, reaped children)
  std::map<pid_t, int64_t> threads_ns;    // tid -> that live thread's own time
};

ProcessCpu ReadProcessCpu(const std::vector<pid_t>& pids);

// The CPU time the processes used between `before` and `after` (ms), less the time of
// the one thread, of those read in both, that used most of it (a worker's request
// loop). Processes and threads first seen in `after` count from zero.
double OtherThreadsMs(const ProcessCpu& before, const ProcessCpu& after);

// The CPUs this process may run on (sched_getaffinity), at least 1.
int UsableCpus();

}  // namespace kvault
