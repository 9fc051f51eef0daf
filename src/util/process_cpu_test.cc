#include "util/process_cpu.h"

#include <gtest/gtest.h>
#include <time.h>
#include <unistd.h>

#include <sys/wait.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <string>
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
  std::atomic<bool> go{false}, spun{false}, stop{false};
  std::thread busiest([&] {  // there before the first reading, as a request loop is
    while (!go) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    SpinFor(120);
    spun = true;
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const ProcessCpu before = ReadProcessCpu(self);
  std::thread exited([] { SpinFor(40); });
  exited.join();
  go = true;
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

char StateOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() ? '?' : stat[close + 2];
}

// A child that exits unreaped (a zombie) keeps what it ran in its stat, and, born in the
// window, is never the thread left out.
TEST(ProcessCpuTest, AZombieChildCounts) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    SpinFor(60);
    ::_exit(0);
  }
  const ProcessCpu before = ReadProcessCpu({::getpid()});
  for (int i = 0; i < 400 && StateOf(child) != 'Z'; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(StateOf(child), 'Z');
  const ProcessCpu after = ReadProcessCpu({::getpid(), child});
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_EQ(after.processes_ns.count(child), 1u);
  EXPECT_GE(OtherThreadsMs(before, after), 40.0);  // clock ticks of 10 ms
}

TEST(ProcessCpuTest, ProcessesThatCannotBeReadAreSkipped) {
  const ProcessCpu cpu = ReadProcessCpu({-1, 0});
  EXPECT_TRUE(cpu.processes_ns.empty());
  EXPECT_EQ(OtherThreadsMs(cpu, cpu), 0.0);
  EXPECT_GE(UsableCpus(), 1);
}

}  // namespace
}  // namespace kvault
