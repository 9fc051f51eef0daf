#include "worker/fake_worker.h"
#include "worker/protocol.h"

#include <gtest/gtest.h>

namespace kvault {
namespace {

using std::chrono::seconds;

TEST(FakeWorkerTest, QueuedRepliesPerOpThenHandlerThenDefault) {
  FakeWorker fake;
  fake.Reply("run", Json{{"ok", false}, {"kind", "runtime_error"}, {"message", "boom"}});
  fake.Handle("run", [](const Json& req) { return FakeWorker::Ok({{"seed", req["seed"]}}); });
  WorkerReply a = fake.Call({{"op", "run"}, {"seed", 1}}, seconds(1));
  EXPECT_EQ(a.failure, WorkerFailure::kNone);
  EXPECT_EQ(a.response["kind"], "runtime_error");
  EXPECT_EQ(a.response["id"], 1);
  WorkerReply b = fake.Call({{"op", "run"}, {"seed", 2}}, seconds(2));
  EXPECT_EQ(b.response["ok"], true);
  EXPECT_EQ(b.response["seed"], 2);
  EXPECT_EQ(b.response["id"], 2);
  WorkerReply c = fake.Call({{"op", "time"}}, seconds(3));
  EXPECT_EQ(c.failure, WorkerFailure::kNone);
  EXPECT_EQ(c.response["ok"], false);
  EXPECT_EQ(c.response["message"], "fake worker: nothing scripted for op 'time'");
  EXPECT_EQ(fake.ops(), (std::vector<std::string>{"run", "run", "time"}));
  EXPECT_EQ(fake.received()[1].timeout, seconds(2));
  EXPECT_EQ(fake.received()[1].request["id"], 2);
  EXPECT_TRUE(fake.alive());
}

TEST(FakeWorkerTest, FailureLeavesItDead) {
  FakeWorker fake;
  fake.Fail("run", WorkerFailure::kDied, "worker killed by signal 11 (SIGSEGV)", -1, 11);
  fake.Reply("run", Json{{"ok", true}});
  WorkerReply r = fake.Call({{"op", "run"}}, seconds(1));
  EXPECT_EQ(r.failure, WorkerFailure::kDied);
  EXPECT_EQ(r.term_signal, 11);
  EXPECT_FALSE(fake.alive());
  WorkerReply after = fake.Call({{"op", "run"}}, seconds(1));
  EXPECT_EQ(after.failure, WorkerFailure::kDied);
  EXPECT_EQ(after.detail, "worker is not running");
}

TEST(FakeWorkerTest, LogAndKill) {
  FakeWorker fake;
  fake.AppendLog("line 1\n");
  fake.AppendLog("line 2\n");
  EXPECT_EQ(fake.TakeLog(), "line 1\nline 2\n");
  EXPECT_EQ(fake.TakeLog(), "");
  fake.Kill();
  fake.Kill();
  EXPECT_EQ(fake.kill_count(), 2);
  EXPECT_FALSE(fake.alive());
}

TEST(FakeWorkerTest, UsableThroughTheInterface) {
  std::unique_ptr<WorkerConnection> w = std::make_unique<FakeWorker>();
  static_cast<FakeWorker&>(*w).Reply("hello", Json{{"ok", true}, {"protocol", protocol::kVersion}});
  WorkerReply r = w->Call({{"op", "hello"}}, seconds(1));
  EXPECT_EQ(r.response["protocol"], protocol::kVersion);
}

}  // namespace
}  // namespace kvault
