#include "util/process_cpu.h"

#include <gtest/gtest.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <thread>

namespace kvault {
namespace {

// Spins until this thread has used `ms` of CPU.
void SpinFor(double ms) {
  auto used = [] {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
  };
  const double until = used() + ms;
  while (used() < until) {
  }
}

// A thread that exits within the window counts (the process clock keeps its time); the
// busiest live thread does not.
TEST(ProcessCpuTest, CountsEveryThreadButTheBusiest) {
  const std::vector<pid_t> self{::getpid()};
  std::atomic<bool> stop{false};
  std::atomic<bool> spun{false};
  const ProcessCpu before = ReadProcessCpu(self);
  std::thread exited([] { SpinFor(40); });
  exited.join();
  std::thread busiest([&] {
    SpinFor(120);
    spun = true;
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (!spun) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const ProcessCpu after = ReadProcessCpu(self);
  stop = true;
  busiest.join();
  ASSERT_EQ(after.processes_ns.size(), 1u);
  EXPECT_GE(after.threads_ns.size(), 2u);
  const double others = OtherThreadsMs(before, after);
  EXPECT_GE(others, 39.0);   // the exited thread's 40 ms and what the main thread used
  EXPECT_LT(others, 100.0);  // not the busiest thread's 120 ms
}

TEST(ProcessCpuTest, ProcessesThatCannotBeReadAreSkipped) {
  const ProcessCpu cpu = ReadProcessCpu({-1, 0});
  EXPECT_TRUE(cpu.processes_ns.empty());
  EXPECT_EQ(OtherThreadsMs(cpu, cpu), 0.0);
  EXPECT_GE(UsableCpus(), 1);
}

}  // namespace
}  // namespace kvault
