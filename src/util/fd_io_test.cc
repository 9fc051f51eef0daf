#include "util/fd_io.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "util/unique_fd.h"

namespace kvault {
namespace {

TEST(FdIoTest, WriteToClosedPipeFailsWithoutSignal) {
  struct sigaction dfl {}, old {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGPIPE, &dfl, &old);  // a raised SIGPIPE would kill this test process
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  ::close(p[0]);
  UniqueFd w(p[1]);
  errno = 0;
  EXPECT_EQ(WriteNoSigpipe(w.get(), "x", 1), -1);
  EXPECT_EQ(errno, EPIPE);
  sigset_t pending;
  sigpending(&pending);
  EXPECT_FALSE(sigismember(&pending, SIGPIPE));
  ::sigaction(SIGPIPE, &old, nullptr);
}

TEST(FdIoTest, ReadAvailableStatesAndBudget) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  UniqueFd r(p[0]), w(p[1]);
  ASSERT_TRUE(SetNonBlocking(r.get()));
  std::string got;
  auto sink = [&](std::string_view d) { got += d; };
  EXPECT_EQ(ReadAvailable(r.get(), sink), ReadState::kOpen);
  EXPECT_EQ(got, "");
  ASSERT_EQ(WriteNoSigpipe(w.get(), "hello", 5), 5);
  EXPECT_EQ(ReadAvailable(r.get(), sink, 2), ReadState::kOpen);
  EXPECT_EQ(got, "he");
  EXPECT_EQ(ReadAvailable(r.get(), sink), ReadState::kOpen);
  EXPECT_EQ(got, "hello");
  w.reset();
  EXPECT_EQ(ReadAvailable(r.get(), sink), ReadState::kEof);
}

TEST(PollMillis, RoundsUpAndClamps) {
  using namespace std::chrono;
  EXPECT_EQ(PollMillis(microseconds(1)), 1);  // a wait never ends early
  EXPECT_EQ(PollMillis(milliseconds(250)), 250);
  EXPECT_EQ(PollMillis(-seconds(3)), 0);
  EXPECT_EQ(PollMillis(hours(24 * 365)), 1 << 30);
}

}  // namespace
}  // namespace kvault
