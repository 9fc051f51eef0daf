// CompilePool with a fake build function: results handed to the right request,
// failures passed through unchanged, unknown requests left to the fallback.
#include "engine/compile_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "util/child_process.h"

namespace kvault {
namespace {

using std::chrono::milliseconds;

BuildRequest Req(const std::string& source) {
  BuildRequest r;
  r.source_path = source;
  return r;
}

TEST(CompilePool, HandsEachLaneTheResultOfItsOwnRequest) {
  std::atomic<int> calls{0};
  CompilePool pool(3, [&](const BuildRequest& r, milliseconds) -> Result<BuildResult> {
    ++calls;
    std::this_thread::sleep_for(milliseconds(20));
    BuildResult b;
    b.ok = r.source_path != "bad.cpp";
    b.timed_out = r.source_path == "slow.cpp";
    b.artifact = r.source_path + ".so";
    if (r.source_path == "broken-toolchain.cpp") return Error{"no compiler"};
    return b;
  });
  for (const char* s : {"a.cpp", "bad.cpp", "slow.cpp", "broken-toolchain.cpp", "a.cpp"}) pool.Submit(Req(s), milliseconds(1000));
  auto a = pool.Take(Req("a.cpp"));
  ASSERT_TRUE(a && a->ok());
  EXPECT_TRUE((*a)->ok);
  EXPECT_EQ((*a)->artifact, "a.cpp.so");
  auto bad = pool.Take(Req("bad.cpp"));
  ASSERT_TRUE(bad && bad->ok());
  EXPECT_FALSE((*bad)->ok);
  EXPECT_TRUE((*pool.Take(Req("slow.cpp")))->timed_out);
  auto broken = pool.Take(Req("broken-toolchain.cpp"));
  ASSERT_TRUE(broken.has_value());
  EXPECT_FALSE(broken->ok());
  EXPECT_EQ(broken->error(), "no compiler");
  EXPECT_EQ(calls.load(), 4);  // a.cpp submitted twice, built once
  EXPECT_FALSE(pool.Take(Req("never.cpp")).has_value());
}

// A build only meant to fill the cache keeps no result for a Take that never comes.
TEST(CompilePool, AnUnclaimedBuildKeepsNoResult) {
  CompilePool pool(1, [](const BuildRequest& r, milliseconds) -> Result<BuildResult> { return BuildResult{}; });
  pool.Submit(Req("ahead.cpp"), milliseconds(1000), CompilePool::Claim::kNone);
  pool.Submit(Req("claimed.cpp"), milliseconds(1000));
  ASSERT_TRUE(pool.Take(Req("claimed.cpp")).has_value());  // FIFO: ahead.cpp was built first
  EXPECT_EQ(pool.built(), 2u);
  EXPECT_FALSE(pool.Take(Req("ahead.cpp")).has_value());
}

// The toolchain's one-time entries go ahead of the builds already queued, once.
TEST(CompilePool, PreparingGoesAheadOfQueuedBuildsAndKeepsNoResult) {
  std::mutex mu;
  std::vector<std::string> order;
  std::atomic<bool> release{false};
  auto note = [&](const std::string& what) {
    std::lock_guard<std::mutex> lock(mu);
    order.push_back(what);
  };
  CompilePool pool(
      1,
      [&](const BuildRequest& r, milliseconds) -> Result<BuildResult> {
        note(r.source_path);
        while (r.source_path == "first.cpp" && !release) std::this_thread::sleep_for(milliseconds(1));
        return BuildResult{};
      },
      [&](const BuildRequest& like, milliseconds) -> Status {
        note("prepare " + std::string(ToString(like.language)));
        return Error{"a failure here is nobody's outcome"};
      });
  pool.Submit(Req("first.cpp"), milliseconds(1000));
  while (true) {  // the one thread is busy with first.cpp
    std::lock_guard<std::mutex> lock(mu);
    if (!order.empty()) break;
  }
  pool.Submit(Req("second.cpp"), milliseconds(1000));
  BuildRequest like = Req("");
  like.language = Language::kCuda;
  pool.Prepare(like, milliseconds(1000));
  pool.Prepare(like, milliseconds(1000));  // queued already: once
  release = true;
  ASSERT_TRUE(pool.Take(Req("second.cpp")).has_value());
  EXPECT_EQ(order, (std::vector<std::string>{"first.cpp", "prepare cuda", "second.cpp"}));
  EXPECT_EQ(pool.built(), 2u);  // preparing is not a build
  EXPECT_TRUE(pool.Take(Req("first.cpp")).has_value());
  EXPECT_FALSE(pool.Take(like).has_value());
}

TEST(CompilePool, RequestsDifferingInAnyFieldAreDifferentBuilds) {
  BuildRequest a = Req("x.cu"), b = Req("x.cu");
  b.arch = "sm_90";
  EXPECT_NE(BuildRequestIdentity(a), BuildRequestIdentity(b));
  b = a;
  b.compile_only = true;
  EXPECT_NE(BuildRequestIdentity(a), BuildRequestIdentity(b));
  b = a;
  b.torch.torch_version = "2.11";
  EXPECT_NE(BuildRequestIdentity(a), BuildRequestIdentity(b));
  EXPECT_EQ(BuildRequestIdentity(a), BuildRequestIdentity(Req("x.cu")));
}

TEST(CompilePool, TheBuilderFallsBackForRequestsItNeverSaw) {
  CompilePool pool(1, [](const BuildRequest&, milliseconds) -> Result<BuildResult> {
    BuildResult b;
    b.artifact = "from the pool";
    return b;
  });
  pool.Submit(Req("known.cpp"), milliseconds(1000));
  BuildFunction lane = pool.Builder([](const BuildRequest&, milliseconds) -> Result<BuildResult> {
    BuildResult b;
    b.artifact = "built by the lane";
    return b;
  });
  EXPECT_EQ(lane(Req("known.cpp"), milliseconds(1000))->artifact, "from the pool");
  EXPECT_EQ(lane(Req("other.cpp"), milliseconds(1000))->artifact, "built by the lane");
}

TEST(CompilePool, DestroyingDropsQueuedWork) {
  std::atomic<int> calls{0};
  {
    CompilePool pool(1, [&](const BuildRequest&, milliseconds) -> Result<BuildResult> {
      ++calls;
      std::this_thread::sleep_for(milliseconds(50));
      return BuildResult{};
    });
    for (int i = 0; i < 20; ++i) pool.Submit(Req("f" + std::to_string(i) + ".cpp"), milliseconds(1000));
  }
  EXPECT_LT(calls.load(), 20);
}

// Once the process is stopping (an interrupted command), queued work is not run.
TEST(CompilePool, StartsNothingOnceStopping) {
  std::atomic<int> builds{0}, prepares{0};
  ChildProcess::StopAll();
  {
    CompilePool pool(
        1, [&](const BuildRequest&, milliseconds) -> Result<BuildResult> { ++builds; return BuildResult{}; },
        [&](const BuildRequest&, milliseconds) -> Status { ++prepares; return Status::Ok(); });
    pool.Prepare(Req("like.cpp"), milliseconds(1000));
    pool.Submit(Req("a.cpp"), milliseconds(1000));
    auto a = pool.Take(Req("a.cpp"));
    ASSERT_TRUE(a.has_value());
    ASSERT_FALSE(a->ok());
    EXPECT_NE(a->error().find("stopping"), std::string::npos) << a->error();
  }
  ChildProcess::ResetStopForTesting();
  EXPECT_EQ(builds.load(), 0);
  EXPECT_EQ(prepares.load(), 0);
}

}  // namespace
}  // namespace kvault
