#include "util/subprocess.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <thread>

#include "util/child_process.h"
#include "util/files.h"
#include "util/testing/process_helpers.h"

namespace kvault {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

CommandResult RunArgv(std::vector<std::string> argv, milliseconds timeout = seconds(10),
                  size_t max_output = 1 << 20) {
  CommandSpec spec;
  spec.argv = std::move(argv);
  auto r = RunCommand(spec, timeout, max_output);
  EXPECT_TRUE(r) << r.error();
  return r ? *r : CommandResult{};
}

CommandResult Sh(const std::string& script, milliseconds timeout = seconds(10)) {
  return RunArgv({"/bin/sh", "-c", script}, timeout);
}

TEST(DescribeTerminationTest, Texts) {
  EXPECT_EQ(DescribeTermination(3, 0), "exited with status 3");
  EXPECT_EQ(DescribeTermination(0, 0), "exited with status 0");
  EXPECT_EQ(DescribeTermination(-1, 11), "killed by signal 11 (SIGSEGV)");
  EXPECT_EQ(DescribeTermination(-1, 9), "killed by signal 9 (SIGKILL)");
  EXPECT_EQ(DescribeTermination(-1, 63), "killed by signal 63");
}

TEST(RunCommandTest, CapturesStdoutAndStderrInOrder) {
  CommandResult r = Sh("echo out; echo err >&2; echo out2");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.term_signal, 0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.output, "out\nerr\nout2\n");
  EXPECT_GT(r.seconds, 0);
}

TEST(RunCommandTest, ExitCode) {
  CommandResult r = Sh("exit 3");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(DescribeTermination(r.exit_code, r.term_signal), "exited with status 3");
}

TEST(RunCommandTest, KilledBySignal) {
  CommandResult r = Sh("echo before; kill -SEGV $$");
  EXPECT_EQ(r.term_signal, SIGSEGV);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_EQ(r.output, "before\n");
  EXPECT_EQ(DescribeTermination(r.exit_code, r.term_signal), "killed by signal 11 (SIGSEGV)");
}

TEST(RunCommandTest, TimeoutKillsWholeGroup) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir);
  std::string pidfile = dir->Join("pid");
  auto start = std::chrono::steady_clock::now();
  CommandResult r = Sh("sleep 30 & echo $! > " + pidfile + "; echo started; wait", milliseconds(300));
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(5));
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.term_signal, SIGKILL);
  EXPECT_EQ(r.output, "started\n");
  pid_t grandchild = testing::ReadPidFile(pidfile);
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(testing::ProcessGone(grandchild));
}

TEST(RunCommandTest, LeftoverBackgroundProcessesDoNotHoldUpTheResult) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir);
  std::string pidfile = dir->Join("pid");
  auto start = std::chrono::steady_clock::now();
  // The background sleep inherits the output pipe and would keep it open for 30 s.
  CommandResult r = Sh("sleep 30 & echo $! > " + pidfile + "; echo done", seconds(20));
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(5));
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "done\n");
  pid_t grandchild = testing::ReadPidFile(pidfile);
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(testing::ProcessGone(grandchild));
}

// The same supervision without a pidfd (older kernels): exit is noticed by polling.
TEST(RunCommandTest, WorksWithoutExitFd) {
  ChildProcess::DisableExitFdForTesting(true);
  CommandResult ok = Sh("echo hi; exit 5");
  CommandResult timeout = Sh("sleep 30", milliseconds(200));
  auto start = std::chrono::steady_clock::now();
  CommandResult leftover = Sh("sleep 30 & echo done");
  auto leftover_time = std::chrono::steady_clock::now() - start;
  ChildProcess::DisableExitFdForTesting(false);
  EXPECT_EQ(ok.exit_code, 5);
  EXPECT_EQ(ok.output, "hi\n");
  EXPECT_TRUE(timeout.timed_out);
  EXPECT_EQ(leftover.output, "done\n");
  EXPECT_LT(leftover_time, seconds(5));
}

TEST(RunCommandTest, MissingProgramIsAnError) {
  CommandSpec spec;
  spec.argv = {"kvault-no-such-program-xyz", "--flag"};
  auto r = RunCommand(spec, seconds(5));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("kvault-no-such-program-xyz"), std::string::npos) << r.error();
  spec.argv = {"/nonexistent/dir/tool"};
  r = RunCommand(spec, seconds(5));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("/nonexistent/dir/tool"), std::string::npos) << r.error();
  spec.argv = {};
  EXPECT_FALSE(RunCommand(spec, seconds(5)));
}

TEST(RunCommandTest, NotExecutableIsAnError) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir);
  ASSERT_TRUE(WriteFileAtomic(dir->Join("script"), "#!/bin/sh\necho hi\n"));
  CommandSpec spec;
  spec.argv = {dir->Join("script")};
  auto r = RunCommand(spec, seconds(5));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("script"), std::string::npos) << r.error();
}

TEST(RunCommandTest, WorkingDirectory) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir);
  CommandSpec spec;
  spec.argv = {"/bin/sh", "-c", "pwd -P"};
  spec.cwd = dir->path();
  auto r = RunCommand(spec, seconds(5));
  ASSERT_TRUE(r) << r.error();
  char real[4096];
  ASSERT_NE(::realpath(dir->path().c_str(), real), nullptr);
  EXPECT_EQ(r->output, std::string(real) + "\n");
  spec.cwd = dir->Join("missing");
  auto bad = RunCommand(spec, seconds(5));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("missing"), std::string::npos);
}

TEST(RunCommandTest, Environment) {
  CommandSpec spec;
  spec.argv = {"env"};
  spec.env_set = {{"KVAULT_A", "1"}, {"KVAULT_B", "two words"}};
  spec.inherit_env = false;
  auto r = RunCommand(spec, seconds(5));
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->output, "KVAULT_A=1\nKVAULT_B=two words\n");

  ::setenv("KVAULT_INHERITED", "yes", 1);
  spec.argv = {"/bin/sh", "-c", "echo $KVAULT_INHERITED $KVAULT_A"};
  spec.inherit_env = true;
  spec.env_set = {{"KVAULT_A", "over"}};
  r = RunCommand(spec, seconds(5));
  ::unsetenv("KVAULT_INHERITED");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->output, "yes over\n");
}

TEST(RunCommandTest, PathLookupUsesChildPath) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir);
  ASSERT_TRUE(WriteFileAtomic(dir->Join("kvault-fake-tool"), "#!/bin/sh\necho fake $1\n"));
  ASSERT_EQ(::chmod(dir->Join("kvault-fake-tool").c_str(), 0755), 0);
  CommandSpec spec;
  spec.argv = {"kvault-fake-tool", "x"};
  spec.env_set = {{"PATH", dir->path() + ":/usr/bin:/bin"}};
  auto r = RunCommand(spec, seconds(5));
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->output, "fake x\n");
}

TEST(RunCommandTest, StdinIsDevNull) {
  CommandResult r = RunArgv({"cat"}, seconds(5));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "");
}

TEST(RunCommandTest, OutputIsBoundedHeadAndTail) {
  CommandResult r = RunArgv({"/bin/sh", "-c", "echo BEGIN; head -c 1000000 /dev/zero | tr '\\0' x; echo; echo END"},
                        seconds(10), 1000);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.output.starts_with("BEGIN\nxxx")) << r.output.substr(0, 20);
  EXPECT_TRUE(r.output.ends_with("xxx\nEND\n"));
  EXPECT_NE(r.output.find("bytes omitted ...]"), std::string::npos);
  EXPECT_LT(r.output.size(), 1100u);
}

TEST(RunCommandTest, LargeOutputDoesNotDeadlock) {
  CommandResult r = RunArgv({"/bin/sh", "-c", "head -c 10000000 /dev/zero; echo done >&2"}, seconds(20),
                        64 << 20);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output.size(), 10000000u + 5);
}

TEST(RunCommandTest, ChildDoesNotInheritStrayDescriptors) {
  int fd = ::open("/dev/null", O_RDONLY);  // deliberately without O_CLOEXEC
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::dup2(fd, 57), 57);
  CommandResult r = Sh("if [ -e /proc/$$/fd/57 ]; then echo leaked; else echo clean; fi");
  ::close(57);
  ::close(fd);
  EXPECT_EQ(r.output, "clean\n");
}

TEST(RunCommandTest, ChildGetsDefaultSigpipeEvenIfParentIgnoresIt) {
  struct sigaction ignore {}, old {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &old);
  // With SIGPIPE ignored, `yes` would complain about a broken pipe on stderr.
  CommandResult r = Sh("yes | head -n 1");
  ::sigaction(SIGPIPE, &old, nullptr);
  EXPECT_EQ(r.output, "y\n");
}

TEST(RunCommandTest, ConcurrentCallsAreIndependent) {
  std::vector<std::thread> threads;
  std::vector<std::string> outputs(8);
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([i, &outputs] {
      CommandSpec spec;
      spec.argv = {"/bin/sh", "-c", "sleep 0.1; echo " + std::to_string(i)};
      auto r = RunCommand(spec, seconds(10));
      if (r) outputs[i] = r->output;
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(outputs[i], std::to_string(i) + "\n");
}

}  // namespace
}  // namespace kvault
