#include "util/child_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <thread>

#include "util/testing/process_helpers.h"

namespace kvault {
namespace {

std::string ReadAll(int fd) {
  std::string out;
  char buf[256];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

TEST(ChildProcessTest, MapsDescriptorsEvenWhenNumbersCross) {
  // Build pipes whose parent-side numbers are 3 and 4, then map them crosswise so a
  // naive dup2 sequence would clobber one source with the other.
  int a[2], b[2];
  ASSERT_EQ(::pipe2(a, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(b, O_CLOEXEC), 0);
  UniqueFd a_r(a[0]), a_w(a[1]), b_r(b[0]), b_w(b[1]);
  ChildProcess::Spec spec;
  spec.argv = {"/bin/sh", "-c", "echo to-a >&4; echo to-b >&3"};
  spec.fds = {{3, b_w.get()}, {4, a_w.get()}};
  auto child = ChildProcess::Spawn(spec);
  ASSERT_TRUE(child) << child.error();
  a_w.reset();
  b_w.reset();
  EXPECT_EQ(ReadAll(a_r.get()), "to-a\n");
  EXPECT_EQ(ReadAll(b_r.get()), "to-b\n");
  ExitStatus st = child->Wait();
  EXPECT_EQ(st.exit_code, 0);
  EXPECT_TRUE(child->HasExited());
}

TEST(ChildProcessTest, ParentDeathSignalOutlivesTheStartingThread) {
  // The child asks for SIGKILL when its parent dies (as the sandbox helper does); the
  // kernel means the thread that started it. Started from a thread that then ends, it
  // must live on: children are started from one thread that lives as long as we do.
  if (::system("python3 -c pass >/dev/null 2>&1") != 0) GTEST_SKIP() << "python3 not found on PATH";
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  UniqueFd ready_r(p[0]), ready_w(p[1]);
  std::optional<ChildProcess> child;
  std::thread starter([&] {
    ChildProcess::Spec spec;
    spec.argv = {"python3", "-c",
                 "import ctypes, os, time; ctypes.CDLL(None).prctl(1, 9, 0, 0, 0); "
                 "os.write(1, b'ready'); time.sleep(30)"};
    spec.fds = {{1, ready_w.get()}};
    auto started = ChildProcess::Spawn(spec);
    ASSERT_TRUE(started) << started.error();
    child.emplace(std::move(*started));
    ready_w.reset();
    char buf[5];
    ASSERT_EQ(::read(ready_r.get(), buf, sizeof buf), 5);  // PR_SET_PDEATHSIG is set
  });
  starter.join();
  ASSERT_TRUE(child.has_value());
  ::usleep(300 * 1000);
  EXPECT_FALSE(child->HasExited()) << "the child died with the thread that started it";
  child->KillGroup();
  EXPECT_EQ(child->Wait().term_signal, SIGKILL);
}

TEST(ChildProcessTest, ExitFdAndHasExited) {
  ChildProcess::Spec spec;
  spec.argv = {"/bin/sh", "-c", "exit 7"};
  auto child = ChildProcess::Spawn(spec);
  ASSERT_TRUE(child);
  if (child->exit_fd() >= 0) {
    pollfd p{child->exit_fd(), POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 5000), 1);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!child->HasExited() && std::chrono::steady_clock::now() < deadline) ::usleep(1000);
  EXPECT_TRUE(child->HasExited());
  EXPECT_TRUE(child->HasExited());  // still a zombie: not reaped by HasExited
  EXPECT_EQ(child->Wait().exit_code, 7);
  EXPECT_EQ(child->Wait().exit_code, 7);  // idempotent
}

TEST(ChildProcessTest, OwnProcessGroup) {
  ChildProcess::Spec spec;
  spec.argv = {"/bin/sleep", "30"};
  auto child = ChildProcess::Spawn(spec);
  ASSERT_TRUE(child);
  EXPECT_EQ(::getpgid(child->pid()), child->pid());
  EXPECT_NE(::getpgid(child->pid()), ::getpgrp());
  EXPECT_FALSE(child->HasExited());
  child->KillGroup();
  ExitStatus st = child->Wait();
  EXPECT_EQ(st.term_signal, SIGKILL);
}

// An interrupted command stops every child it started; reaped ones are not touched.
TEST(ChildProcessTest, KillAllGroupsKillsEveryLiveChild) {
  ChildProcess::Spec spec;
  spec.argv = {"/bin/sh", "-c", "/bin/sleep 30 & wait"};
  auto a = ChildProcess::Spawn(spec);
  spec.argv = {"/bin/sleep", "30"};
  auto b = ChildProcess::Spawn(spec);
  spec.argv = {"/bin/true"};
  auto done = ChildProcess::Spawn(spec);
  ASSERT_TRUE(a && b && done);
  done->Wait();
  ChildProcess::KillAllGroups();
  EXPECT_EQ(a->Wait().term_signal, SIGKILL);
  EXPECT_EQ(b->Wait().term_signal, SIGKILL);
}

TEST(ChildProcessTest, DestructorKillsAndReaps) {
  pid_t pid;
  {
    ChildProcess::Spec spec;
    spec.argv = {"/bin/sleep", "30"};
    auto child = ChildProcess::Spawn(spec);
    ASSERT_TRUE(child);
    pid = child->pid();
    ChildProcess moved = std::move(*child);  // moved-from must not kill or reap
    EXPECT_FALSE(moved.HasExited());
  }
  EXPECT_TRUE(testing::ProcessGone(pid));
  EXPECT_NE(::kill(pid, 0), 0);  // reaped, not a zombie of ours
}

}  // namespace
}  // namespace kvault
