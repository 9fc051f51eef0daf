// DeviceSession against scripted workers: the protocol version from `hello`; when
// the zygote starts (real zygote processes forking a scripted worker).
#include "engine/device_session.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "engine/hello_environment.h"
#include "engine/testing/test_cache.h"
#include "engine/verifier.h"
#include "util/env.h"
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

  // Zygotes of `python3 -m kvault_worker.zygote` whose forks run `entry`; each start
  // counted, with the number of workers started from scratch before it.
  ZygoteFactory Zygotes(std::string entry) {
    return [this, entry](const WorkerOptions&, std::chrono::milliseconds timeout) {
      workers_before_zygote_.push_back(started_.size());
      WorkerOptions o;
      o.argv = {"python3", "-m", "kvault_worker.zygote"};
      o.env_set = {{"PYTHONPATH", GetEnv("KVAULT_SOURCE_ROOT").value_or("") + "/python:" + cache_.path()},
                   {"KVAULT_ZYGOTE_ENTRY", entry}};
      o.cwd = cache_.path();
      return Zygote::Spawn(o, timeout);
    };
  }
  // A forked worker that answers every request as a hello of this engine's version.
  void WriteHelloWorker() {
    std::ofstream(cache_.path() + "/hello_worker.py")
        << "import json, os\n"
           "def main():\n"
           "    req_fd, resp_fd = (int(x) for x in os.environ['KVAULT_WORKER_FDS'].split(','))\n"
           "    out = os.fdopen(resp_fd, 'w')\n"
           "    for line in os.fdopen(req_fd):\n"
           "        out.write(json.dumps(dict(id=json.loads(line)['id'], ok=True, protocol="
        << protocol::kVersion << ")) + '\\n')\n"
           "        out.flush()\n";
  }
  // A forked worker whose first hello finds the device full (as CUDA says when it
  // cannot make a context); every later fork answers as WriteHelloWorker's.
  void WriteDeviceFullOnceWorker() {
    std::ofstream(cache_.path() + "/full_once_worker.py")
        << "import json, os\n"
           "MARK = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'full_once.mark')\n"
           "def main():\n"
           "    req_fd, resp_fd = (int(x) for x in os.environ['KVAULT_WORKER_FDS'].split(','))\n"
           "    out = os.fdopen(resp_fd, 'w')\n"
           "    full = not os.path.exists(MARK)\n"
           "    open(MARK, 'w').close()\n"
           "    for line in os.fdopen(req_fd):\n"
           "        reply = dict(id=json.loads(line)['id'], ok=True, protocol="
        << protocol::kVersion << ")\n"
           "        if full:\n"
           "            reply = dict(id=reply['id'], ok=False, kind='internal', message="
           "'worker error in hello: AcceleratorError: CUDA error: out of memory')\n"
           "        out.write(json.dumps(reply) + '\\n')\n"
           "        out.flush()\n";
  }
  bool ZygoteTestable() const {
    return GetEnv("KVAULT_SOURCE_ROOT") && ::system("python3 -c pass >/dev/null 2>&1") == 0;
  }

  kvault::testing::TestCache cache_;
  EngineOptions& options_ = cache_.options;
  std::vector<FakeWorker*> started_;
  std::vector<size_t> workers_before_zygote_;  // one per zygote start
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

// Lanes sharing a HelloEnvironment (a pool's) ask one worker for the build environment;
// the other lane's answer has it all the same. A first that gets no answer passes the
// asking on.
TEST_F(DeviceSessionTest, LanesOfAPoolAskOneWorkerForTheEnvironment) {
  EngineOptions shared = options_;
  shared.hello_environment = std::make_shared<HelloEnvironment>();
  const Json build{{"include_paths", {"/inc"}}};
  bool fail_next = true;
  auto factory = [&](const WorkerOptions&) -> Result<std::unique_ptr<WorkerConnection>> {
    auto w = std::make_unique<FakeWorker>();
    const bool fail = std::exchange(fail_next, false);
    if (fail) w->Fail("hello", WorkerFailure::kDied, "worker killed by signal 9 (SIGKILL)", -1, 9);
    w->Handle("hello", [&build](const Json& request) {
      Json hello{{"protocol", protocol::kVersion}};
      if (request.value("environment", true)) hello["build"] = build;
      return FakeWorker::Ok(hello);
    });
    started_.push_back(w.get());
    return std::unique_ptr<WorkerConnection>(std::move(w));
  };
  DeviceSession failing(shared, "cpu", factory), first(shared, "cpu", factory), second(shared, "cpu", factory);
  ASSERT_FALSE(failing.Hello());
  auto a = first.Hello();
  auto b = second.Hello();
  ASSERT_TRUE(a) << a.error();
  ASSERT_TRUE(b) << b.error();
  ASSERT_EQ(started_.size(), 3u);
  std::vector<bool> asked;
  for (FakeWorker* w : started_) asked.push_back(w->received()[0].request["environment"].get<bool>());
  EXPECT_EQ(asked, (std::vector<bool>{true, true, false}));
  EXPECT_EQ((*a)["build"], build);
  EXPECT_EQ((*b)["build"], build);
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

// The zygote starts beside the first reference worker (before it, not after its
// hello), and the first candidate worker is its fork: no second zygote, no worker
// from scratch.
TEST_F(DeviceSessionTest, ZygoteStartsWithTheFirstReferenceWorker) {
  if (!ZygoteTestable()) GTEST_SKIP() << "needs python3 and KVAULT_SOURCE_ROOT (ctest sets it)";
  WriteHelloWorker();
  options_.zygote = true;
  DeviceSession session(options_, "cpu", Factory(Json{{"protocol", protocol::kVersion}}),
                        Zygotes("hello_worker:main"));
  ASSERT_TRUE(session.Hello());
  EXPECT_EQ(workers_before_zygote_, std::vector<size_t>{0});
  auto w = session.Get(WorkerRole::kCandidate);
  ASSERT_TRUE(w) << w.error();
  EXPECT_TRUE((*w)->alive());
  EXPECT_EQ(started_.size(), 1u);  // the reference only
  session.Discard(WorkerRole::kReference);
  ASSERT_TRUE(session.Get(WorkerRole::kReference));
  EXPECT_EQ(workers_before_zygote_.size(), 1u);
}

// A zygote that dies while it imports costs the first candidate nothing but the
// fallback: a worker from scratch, said once on stderr, and no zygote again.
TEST_F(DeviceSessionTest, ZygoteThatFailsEarlyFallsBackToWorkersFromScratch) {
  if (!ZygoteTestable()) GTEST_SKIP() << "needs python3 and KVAULT_SOURCE_ROOT (ctest sets it)";
  options_.zygote = true;
  DeviceSession session(options_, "cpu", Factory(Json{{"protocol", protocol::kVersion}}),
                        Zygotes("no_such_worker_module:main"));
  ASSERT_TRUE(session.Hello());
  ASSERT_EQ(workers_before_zygote_.size(), 1u);
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 2; ++i) {
    auto w = session.Get(WorkerRole::kCandidate);
    ASSERT_TRUE(w) << w.error();
    session.Discard(WorkerRole::kCandidate);
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(started_.size(), 3u);  // the reference, then two candidates from scratch
  EXPECT_EQ(workers_before_zygote_.size(), 1u);
  EXPECT_NE(err.find("no worker zygote"), std::string::npos) << err;
  EXPECT_NE(err.find("no_such_worker_module"), std::string::npos) << err;  // its own words
  EXPECT_EQ(err.find("no worker zygote"), err.rfind("no worker zygote")) << err;
}

// A fork that cannot open a full device fails that start alone: the zygote stays,
// and the next candidate is its fork again, not a worker from scratch.
TEST_F(DeviceSessionTest, ForkThatFindsTheDeviceFullKeepsTheZygote) {
  if (!ZygoteTestable()) GTEST_SKIP() << "needs python3 and KVAULT_SOURCE_ROOT (ctest sets it)";
  WriteDeviceFullOnceWorker();
  options_.zygote = true;
  DeviceSession session(options_, "cpu", Factory(Json{{"protocol", protocol::kVersion}}),
                        Zygotes("full_once_worker:main"));
  ASSERT_TRUE(session.Hello());
  ::testing::internal::CaptureStderr();
  auto first = session.Get(WorkerRole::kCandidate);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_FALSE(first);
  EXPECT_NE(first.error().find("could not open the device"), std::string::npos) << first.error();
  EXPECT_EQ(err.find("from scratch"), std::string::npos) << err;
  auto second = session.Get(WorkerRole::kCandidate);
  ASSERT_TRUE(second) << second.error();
  EXPECT_EQ(started_.size(), 1u);  // the reference only: the candidate is a fork
  EXPECT_EQ(workers_before_zygote_.size(), 1u);
}

// --compile-only rarely wants a candidate worker: no zygote until one is wanted.
TEST_F(DeviceSessionTest, CompileOnlyStartsNoZygoteWithTheReference) {
  options_.zygote = true;
  options_.compile_only = true;
  DeviceSession session(options_, "cpu", Factory(Json{{"protocol", protocol::kVersion}}),
                        Zygotes("hello_worker:main"));
  ASSERT_TRUE(session.Hello());
  EXPECT_TRUE(workers_before_zygote_.empty());
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
