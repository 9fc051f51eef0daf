#include "util/process_tree.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace kvault {
namespace {

char StateOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() ? '?' : stat[close + 2];
}

bool WaitForState(pid_t pid, char want) {
  for (int i = 0; i < 200; ++i) {
    if (StateOf(pid) == want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// A child that forks a grandchild which leaves the process group (setsid); both spin.
TEST(FrozenTreeTest, StopsChildrenAndGrandchildrenAndContinuesThem) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const pid_t grandchild = ::fork();
    if (grandchild == 0) {
      ::setsid();
      for (;;) {
      }
    }
    (void)!::write(pipe_fds[1], &grandchild, sizeof grandchild);
    for (;;) {
    }
  }
  pid_t grandchild = 0;
  ASSERT_EQ(::read(pipe_fds[0], &grandchild, sizeof grandchild), static_cast<ssize_t>(sizeof grandchild));
  ::close(pipe_fds[0]), ::close(pipe_fds[1]);
  const pid_t self = ::getpid();
  {
    const auto below = Descendants(self);
    EXPECT_NE(std::find(below.begin(), below.end(), child), below.end());
    EXPECT_NE(std::find(below.begin(), below.end(), grandchild), below.end());
    FrozenTree frozen(self, FrozenTree::kWithoutRoot);
    EXPECT_GE(frozen.size(), 2u);
    EXPECT_TRUE(WaitForState(child, 'T'));
    EXPECT_TRUE(WaitForState(grandchild, 'T'));
  }
  EXPECT_TRUE(WaitForState(child, 'R'));
  EXPECT_TRUE(WaitForState(grandchild, 'R'));
  ::kill(grandchild, SIGKILL);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

TEST(FrozenTreeTest, NoRootStopsNothing) {
  FrozenTree frozen(0, FrozenTree::kWithRoot);
  EXPECT_EQ(frozen.size(), 0u);
}

}  // namespace
}  // namespace kvault
