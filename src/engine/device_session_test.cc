// DeviceSession against scripted workers: the protocol version from `hello`.
#include "engine/device_session.h"

#include <gtest/gtest.h>

#include "engine/testing/test_cache.h"
#include "engine/verifier.h"
#include "util/files.h"
#include "worker/fake_worker.h"
#include "worker/protocol.h"

namespace kvault {
namespace {

class DeviceSessionTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(cache_.ok()); }

  // Workers whose hello reports `hello` (merged into {"ok": true}).
  WorkerFactory Factory(Json hello) {
    return [this, hello](const WorkerOptions&) -> Result<std::unique_ptr<WorkerConnection>> {
      auto w = std::make_unique<FakeWorker>();
      w->Handle("hello", [hello](const Json&) { return FakeWorker::Ok(hello); });
      started_.push_back(w.get());
      return std::unique_ptr<WorkerConnection>(std::move(w));
    };
  }

  kvault::testing::TestCache cache_;
  EngineOptions& options_ = cache_.options;
  std::vector<FakeWorker*> started_;
};

TEST_F(DeviceSessionTest, WorkerOfTheEngineVersionIsUsed) {
  DeviceSession session(options_, "cpu", Factory(Json{{"protocol", protocol::kVersion}}));
  auto w = session.Get(WorkerRole::kReference);
  ASSERT_TRUE(w) << w.error();
  EXPECT_TRUE((*w)->alive());
  ASSERT_EQ(started_.size(), 1u);
  EXPECT_EQ(started_[0]->ops(), std::vector<std::string>{"hello"});
  EXPECT_EQ(started_[0]->received()[0].request["backend"], "cpu");
}

TEST_F(DeviceSessionTest, WorkerOfAnotherVersionIsRefused) {
  DeviceSession session(options_, "cpu", Factory(Json{{"protocol", protocol::kVersion + 1}}));
  auto w = session.Get(WorkerRole::kCandidate);
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().find("protocol version " + std::to_string(protocol::kVersion + 1)), std::string::npos)
      << w.error();
  ASSERT_EQ(started_.size(), 1u);
  EXPECT_GE(started_[0]->kill_count(), 1);  // not left running
  EXPECT_FALSE(session.Hello());            // nor taken for the session's hello
}

TEST_F(DeviceSessionTest, WorkerWithoutAVersionIsRefused) {
  DeviceSession session(options_, "cpu", Factory(Json{{"torch", "t"}}));
  auto hello = session.Hello();
  ASSERT_FALSE(hello);
  EXPECT_NE(hello.error().find("names no protocol version"), std::string::npos) << hello.error();
}

// A reference worker started ahead takes the place of the one discarded, without a
// start in between; once taken, the next one starts as before.
TEST_F(DeviceSessionTest, APrestartedReferenceWorkerReplacesTheDiscardedOne) {
  DeviceSession session(options_, "cpu", Factory(Json{{"protocol", protocol::kVersion}}));
  ASSERT_TRUE(session.Hello());
  session.PrestartReference();
  session.PrestartReference();  // one at a time
  session.Discard(WorkerRole::kReference);
  auto w = session.Get(WorkerRole::kReference);
  ASSERT_TRUE(w) << w.error();
  ASSERT_EQ(started_.size(), 2u);
  EXPECT_EQ(*w, started_[1]);
  EXPECT_GE(started_[0]->kill_count(), 1);
  EXPECT_EQ(started_[1]->ops(), std::vector<std::string>{"hello"});  // greeted, nothing else
  session.Discard(WorkerRole::kReference);
  ASSERT_TRUE(session.Get(WorkerRole::kReference));
  EXPECT_EQ(started_.size(), 3u);
}

// A verification with workers of another version ends as infra_error: neither the
// candidate's fault nor the task's.
TEST_F(DeviceSessionTest, VerificationWithAnotherVersionIsInfraError) {
  Verifier verifier(options_, Factory(Json{{"protocol", protocol::kVersion + 1}}));
  const TaskFile task{"relu", cache_.path() + "/relu.py", "source", "taskhash"};
  const Candidate candidate{cache_.path() + "/relu_new.py", "class ModelNew: ...",
                            CandidateFormat::kKernelBench, "python", "candhash"};
  Verification v = verifier.Verify(task, candidate);
  EXPECT_EQ(v.status, OutcomeStatus::kInfraError) << v.message;
  EXPECT_NE(v.message.find("protocol version"), std::string::npos) << v.message;
  EXPECT_FALSE(v.reward.has_value());
}

}  // namespace
}  // namespace kvault
