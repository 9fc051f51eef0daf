// The lane pool's reuse rule, against an in-memory store and scripted workers.
#include "engine/lane_pool.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "util/files.h"
#include "worker/fake_worker.h"
#include "worker/protocol.h"

namespace kvault {
namespace {

// A row an engine of this store verified, of the content the tests ask about.
AttemptRecord Row(const std::string& status = "passed") {
  AttemptRecord r;
  r.run = "r1";
  r.task = "relu";
  r.task_hash = "taskhash";
  r.candidate_hash = "candhash";
  r.language = "python";
  r.format = "kernelbench";
  r.backend = "cpu";
  r.arch = "x86_64";
  r.status = status;
  r.correct = status == "passed";
  if (status == "passed") r.reward = 1.0;
  r.policy = "custom_kernel";
  r.sample = "s1";
  return r;
}

// The verdict settings of an engine run with no flag (and of rows that record none).
const Json kDefaults = VerdictSettings(EngineOptions{});

ContentKey KeyOf(const AttemptRecord& r) {
  return {r.run, r.task_hash, r.candidate_hash, r.language, r.backend, r.arch, r.policy, r.sample};
}

std::unique_ptr<Store> OpenWith(std::vector<AttemptRecord> rows) {
  auto store = Store::Open(":memory:");
  EXPECT_TRUE(store) << store.error();
  for (AttemptRecord& r : rows) EXPECT_TRUE((*store)->Put(r));
  return std::move(*store);
}

TEST(FindReusable, TheSameContentUnderAnyTaskName) {
  AttemptRecord renamed = Row();
  renamed.task = "level1/relu";
  auto store = OpenWith({renamed});
  auto found = FindReusable(*store, KeyOf(Row()), kDefaults);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->task, "level1/relu");
  EXPECT_EQ(found->status, "passed");
}

TEST(FindReusable, AnotherPolicyLanguageSampleOrArchIsAnotherAttempt) {
  auto store = OpenWith({Row()});
  ContentKey k = KeyOf(Row());
  k.policy = "any";
  EXPECT_FALSE(FindReusable(*store, k, kDefaults)) << "a pass under `any` is no custom_kernel pass";
  k = KeyOf(Row());
  k.language = "cuda";
  EXPECT_FALSE(FindReusable(*store, k, kDefaults)) << "the same bytes saved as another language";
  k = KeyOf(Row());
  k.sample = "s2";
  EXPECT_FALSE(FindReusable(*store, k, kDefaults));
  k = KeyOf(Row());
  k.arch = "gfx942";
  EXPECT_FALSE(FindReusable(*store, k, kDefaults));
  k = KeyOf(Row());
  k.policy = "";
  EXPECT_FALSE(FindReusable(*store, k, kDefaults)) << "an unknown policy matches nothing";
}

TEST(FindReusable, NeverAnImportedClaimOrAnOutcomeNotTheCandidates) {
  // unsupported: a KernelBench file's row from when its text decided it (a comment
  // naming __global__) would keep it out of pass@k; decided again instead.
  for (const char* status : {"infra_error", "task_error", "unsupported", "no_such_status"}) {
    auto store = OpenWith({Row(status)});
    EXPECT_FALSE(FindReusable(*store, KeyOf(Row()), kDefaults)) << status;
  }
  AttemptRecord imported = Row();
  imported.origin = "imported";
  auto store = OpenWith({imported});
  EXPECT_FALSE(FindReusable(*store, KeyOf(Row()), kDefaults));
  EXPECT_FALSE(Reusable(imported, kDefaults));
  EXPECT_TRUE(Reusable(Row("mismatch"), kDefaults));
}

TEST(FindReusable, NeverARecordOfOtherVerdictSettings) {
  EngineOptions untimed, loose;
  untimed.skip_timing = true;
  loose.rtol = loose.atol = 1e-2;
  AttemptRecord correctness_only = Row();
  correctness_only.environment["verify"] = VerdictSettings(untimed);
  auto store = OpenWith({correctness_only});
  EXPECT_FALSE(FindReusable(*store, KeyOf(Row()), kDefaults)) << "a pass without timing has no speedup";
  EXPECT_TRUE(FindReusable(*store, KeyOf(Row()), VerdictSettings(untimed)));
  store = OpenWith({Row()});  // made under the defaults (no settings recorded)
  EXPECT_TRUE(FindReusable(*store, KeyOf(Row()), kDefaults));
  EXPECT_FALSE(FindReusable(*store, KeyOf(Row()), VerdictSettings(loose))) << "checked at other tolerances";
}

// Attempts on a pool of one lane whose workers are scripted: a candidate that is
// verified ends as a load_error (its worker refuses to load it).
class LanePoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::Create();
    ASSERT_TRUE(dir);
    dir_ = std::make_unique<TempDir>(std::move(*dir));
    options_.cache_dir = dir_->path();
    options_.backend = Backend::kCpu;
    options_.policy = "custom_kernel";
    task_ = TaskFile{"relu", dir_->path() + "/relu.py", "source", "taskhash"};
    candidate_ = Candidate{dir_->path() + "/s1.py", "class ModelNew: ...", CandidateFormat::kKernelBench,
                           "python", "candhash"};
  }

  WorkerFactory Factory() {
    return [this](const WorkerOptions&) -> Result<std::unique_ptr<WorkerConnection>> {
      auto w = std::make_unique<FakeWorker>();
      w->Handle("hello", [this](const Json&) {
        std::this_thread::sleep_for(hello_delay_);
        return FakeWorker::Ok(Json{{"protocol", protocol::kVersion}, {"torch", "t"}, {"python", "p"},
                                   {"device", {{"name", "cpu"}, {"arch", "x86_64"}}}, {"build", Json::object()}});
      });
      w->Handle("describe", [this](const Json&) {
        ++describes_;
        std::this_thread::sleep_for(describe_delay_);
        return FakeWorker::Ok(Json{{"task", {{"name", "relu"}, {"has_twin", false}, {"num_parameters", 0},
                                             {"cases", {{{"name", "default"}, {"correctness", true}, {"performance", true}}}},
                                             {"meta", {{"policy", task_policy_}}}}}});
      });
      w->Handle("load", [this](const Json&) {
        ++loads_;
        WorkerReply reply;
        reply.response = Json{{"ok", false}, {"kind", "load_error"}, {"message", "no"}};
        return reply;
      });
      w->Handle("unload", [](const Json&) { return FakeWorker::Ok(); });
      return std::unique_ptr<WorkerConnection>(std::move(w));
    };
  }

  LaneAttempt Attempt(Store& store, const std::string& policy = "", bool force = false) {
    LanePool pool(options_, store, {.factory = Factory()});
    const Result<Candidate> candidate = candidate_;
    return pool.Attempt(pool.lane(0), {.run = "r1", .task = task_, .candidate = candidate,
                                       .candidate_path = candidate_.path, .sample = "s1", .policy = policy,
                                       .force = force});
  }

  std::unique_ptr<TempDir> dir_;
  EngineOptions options_;
  TaskFile task_;
  Candidate candidate_;
  std::string task_policy_ = "custom_kernel";
  int describes_ = 0, loads_ = 0;
  std::chrono::milliseconds hello_delay_{0}, describe_delay_{0};
};

TEST_F(LanePoolTest, TheLanesStartAndTheLookupsDescribeAreCountedInTheAttempt) {
  // Under policy `task` the store lookup describes the task before the verifier's
  // clock starts; the lane's first attempt also starts its workers then.
  hello_delay_ = std::chrono::milliseconds(150);
  describe_delay_ = std::chrono::milliseconds(300);
  auto store = OpenWith({});
  LaneAttempt a = Attempt(*store, "task");
  ASSERT_TRUE(a.verification);
  ASSERT_TRUE(a.verification->phases);
  EXPECT_EQ(describes_, 1) << "described once, for the lookup";
  EXPECT_GE(a.verification->phases->Seconds(Phase::kDescribe).value_or(0), 0.3);
  EXPECT_GE(a.verification->phases->Seconds(Phase::kWorkerStart).value_or(0), 0.15);
  EXPECT_GE(a.verification->seconds, 0.45);
}

TEST_F(LanePoolTest, TheSameContentIsTakenFromTheStore) {
  auto store = OpenWith({Row()});
  LaneAttempt a = Attempt(*store);
  EXPECT_TRUE(a.from_store);
  EXPECT_FALSE(a.verification);
  EXPECT_EQ(a.record.status, "passed");
  EXPECT_EQ(loads_, 0) << "nothing was verified";
}

TEST_F(LanePoolTest, AnotherPolicyIsVerifiedAgainAndRecorded) {
  AttemptRecord any = Row();
  any.policy = "any";
  auto store = OpenWith({any});
  LaneAttempt a = Attempt(*store);
  EXPECT_FALSE(a.from_store);
  ASSERT_TRUE(a.verification);
  EXPECT_EQ(a.record.status, "load_error");
  EXPECT_EQ(a.record.policy, "custom_kernel");
  EXPECT_EQ(loads_, 1);
  EXPECT_TRUE(a.store_error.empty()) << a.store_error;
  // Recorded: the next attempt of this content is answered from the store.
  LaneAttempt again = Attempt(*store);
  EXPECT_TRUE(again.from_store);
  EXPECT_EQ(again.record.status, "load_error");
  EXPECT_EQ(loads_, 1);
}

TEST_F(LanePoolTest, AnotherLanguageAnImportedRowOrAnInfraErrorIsVerifiedAgain) {
  AttemptRecord cuda = Row();
  cuda.language = "cuda";
  AttemptRecord imported = Row();
  imported.origin = "imported";
  for (const AttemptRecord& row : {cuda, imported, Row("infra_error")}) {
    auto store = OpenWith({row});
    const int before = loads_;
    LaneAttempt a = Attempt(*store);
    EXPECT_FALSE(a.from_store) << row.language << " " << row.origin << " " << row.status;
    EXPECT_EQ(loads_, before + 1);
  }
}

TEST_F(LanePoolTest, OtherToleranceFlagsVerifyAgainAndAreRecorded) {
  auto store = OpenWith({Row()});
  options_.rtol = options_.atol = 1e-2;
  LaneAttempt a = Attempt(*store);
  EXPECT_FALSE(a.from_store);
  EXPECT_EQ(a.record.environment["verify"], VerdictSettings(options_));
  EXPECT_TRUE(Attempt(*store).from_store) << "the same flags again";
}

TEST_F(LanePoolTest, ForceVerifiesWhatTheStoreHas) {
  auto store = OpenWith({Row()});
  LaneAttempt a = Attempt(*store, "", /*force=*/true);
  EXPECT_FALSE(a.from_store);
  EXPECT_EQ(loads_, 1);
}

TEST_F(LanePoolTest, PolicyTaskIsTheTasksOwn) {
  auto store = OpenWith({Row()});  // recorded under custom_kernel
  task_policy_ = "custom_kernel";
  EXPECT_TRUE(Attempt(*store, kPolicyTask).from_store);
  EXPECT_EQ(describes_, 1) << "the task was described to learn its policy";
  task_policy_ = "any";  // the same row no longer answers a task whose own policy is any
  LaneAttempt a = Attempt(*store, kPolicyTask);
  EXPECT_FALSE(a.from_store);
  EXPECT_EQ(a.record.policy, "any");
}

TEST_F(LanePoolTest, KeepFalseRecordsNothing) {
  auto store = OpenWith({});
  LanePool pool(options_, *store, {.factory = Factory()});
  const Result<Candidate> candidate = candidate_;
  LaneAttempt a = pool.Attempt(pool.lane(0),
                               {.run = "r1", .task = task_, .candidate = candidate, .candidate_path = candidate_.path,
                                .sample = "s1"},
                               [] { return false; });
  EXPECT_TRUE(a.dropped);
  auto rows = store->ListRun("r1");
  ASSERT_TRUE(rows);
  EXPECT_TRUE(rows->empty());
}

}  // namespace
}  // namespace kvault
