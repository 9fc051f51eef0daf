#include "worker/process_worker.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include "util/files.h"
#include "util/testing/process_helpers.h"

namespace kvault {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A fake worker speaking the protocol; each op exercises one behaviour.
constexpr const char* kPythonWorker = R"PY(
import json, os, signal, subprocess, sys, time
req_fd, resp_fd = (int(x) for x in os.environ["KVAULT_WORKER_FDS"].split(","))
requests = os.fdopen(req_fd, "r")
responses = os.fdopen(resp_fd, "w")

def answer(req, **fields):
    responses.write(json.dumps(dict(id=req["id"], ok=True, **fields)) + "\n")
    responses.flush()

for line in requests:
    req = json.loads(line)
    op = req["op"]
    print("handling", op, flush=True)
    sys.stderr.write("stderr " + op + "\n")
    sys.stderr.flush()
    if op == "echo":
        answer(req, request=req, env=os.environ.get("KVAULT_TEST_VALUE"), cwd=os.getcwd())
    elif op == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif op == "hang":
        time.sleep(3600)
    elif op == "exit":
        sys.exit(req["code"])
    elif op == "flood":
        sys.stdout.write("HEAD" + "x" * 10_000_000 + "TAIL\n")
        sys.stdout.flush()
        answer(req)
    elif op == "big":
        answer(req, data="y" * req["n"])
    elif op == "garbage":
        responses.write("this is not json\n")
        responses.flush()
    elif op == "array":
        responses.write("[1, 2]\n")
        responses.flush()
    elif op == "wrong_id":
        responses.write(json.dumps(dict(id=req["id"] + 100, ok=True)) + "\n")
        responses.flush()
    elif op == "grandchild":
        p = subprocess.Popen(["sleep", "3600"])
        with open(req["pidfile"], "w") as f:
            f.write(str(p.pid))
        if req.get("answer"):
            answer(req)
        else:
            time.sleep(3600)
    elif op == "close_responses":
        responses.close()
        time.sleep(3600)
    elif op == "answer_then_die":
        answer(req)
        os._exit(0)
    elif op == "split":
        text = json.dumps(dict(id=req["id"], ok=True, split=True)) + "\n"
        responses.write(text[:5])
        responses.flush()
        time.sleep(0.2)
        responses.write(text[5:])
        responses.flush()
    elif op == "shutdown":
        answer(req)
        sys.exit(0)
    else:
        responses.write(json.dumps(dict(id=req["id"], ok=False, kind="bad_request",
                                        message="unknown op " + op)) + "\n")
        responses.flush()
)PY";

class ProcessWorkerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::Create("", "kvault-worker-test");
    ASSERT_TRUE(dir) << dir.error();
    dir_.emplace(std::move(*dir));
    ASSERT_TRUE(WriteFileAtomic(dir_->Join("worker.py"), kPythonWorker));
  }

  // Starts the Python fake worker; skips the test when python3 is missing.
  std::unique_ptr<ProcessWorker> StartPython(WorkerOptions options = {}) {
    options.argv = {"python3", dir_->Join("worker.py")};
    auto w = ProcessWorker::Start(options);
    if (!w) {
      ADD_FAILURE() << w.error();
      return nullptr;
    }
    return std::move(*w);
  }

  // Starts `script` with /bin/sh.
  std::unique_ptr<ProcessWorker> StartShell(const std::string& script) {
    WorkerOptions options;
    options.argv = {"/bin/sh", "-c", script};
    auto w = ProcessWorker::Start(options);
    EXPECT_TRUE(w) << w.error();
    return w ? std::move(*w) : nullptr;
  }

  static WorkerReply CallOp(WorkerConnection& w, Json req, milliseconds timeout = seconds(20)) {
    return w.Call(std::move(req), timeout);
  }

  std::optional<TempDir> dir_;
};

bool HavePython() {
  static const bool have = ::system("python3 -c 'pass' >/dev/null 2>&1") == 0;
  return have;
}

#define REQUIRE_PYTHON() \
  if (!HavePython()) GTEST_SKIP() << "python3 not found on PATH"

TEST_F(ProcessWorkerTest, AnswersWithMatchingIdsAndKeepsLog) {
  REQUIRE_PYTHON();
  WorkerOptions options;
  options.env_set = {{"KVAULT_TEST_VALUE", "v1"}};
  options.cwd = dir_->path();
  auto w = StartPython(options);
  ASSERT_TRUE(w);
  EXPECT_TRUE(w->alive());
  WorkerReply r = CallOp(*w, {{"op", "echo"}, {"x", "é"}});
  ASSERT_EQ(r.failure, WorkerFailure::kNone) << r.detail;
  EXPECT_EQ(r.response["id"], 1);
  EXPECT_EQ(r.response["request"]["x"], "é");
  EXPECT_EQ(r.response["env"], "v1");
  char real[4096];
  ASSERT_NE(::realpath(dir_->path().c_str(), real), nullptr);
  EXPECT_EQ(r.response["cwd"], real);
  r = CallOp(*w, {{"op", "echo"}});
  EXPECT_EQ(r.response["id"], 2);
  r = CallOp(*w, {{"op", "nonsense"}});
  ASSERT_EQ(r.failure, WorkerFailure::kNone);
  EXPECT_EQ(r.response["ok"], false);
  EXPECT_EQ(r.response["kind"], "bad_request");
  std::string log = w->TakeLog();
  EXPECT_NE(log.find("handling echo\n"), std::string::npos) << log;
  EXPECT_NE(log.find("stderr echo\n"), std::string::npos) << log;
  EXPECT_NE(log.find("handling nonsense\n"), std::string::npos) << log;
  EXPECT_EQ(w->TakeLog(), "");
  EXPECT_TRUE(w->alive());
}

TEST_F(ProcessWorkerTest, ShellWorkerCrashingWithSegvIsDied) {
  // Reads one request, then kills itself with SIGSEGV.
  auto w = StartShell("read line <&3; echo about to crash; kill -SEGV $$");
  ASSERT_TRUE(w);
  WorkerReply r = CallOp(*w, {{"op", "hello"}});
  EXPECT_EQ(r.failure, WorkerFailure::kDied);
  EXPECT_EQ(r.detail, "worker killed by signal 11 (SIGSEGV)");
  EXPECT_EQ(r.term_signal, SIGSEGV);
  EXPECT_FALSE(w->alive());
  EXPECT_EQ(w->TakeLog(), "about to crash\n");
  WorkerReply again = CallOp(*w, {{"op", "hello"}});
  EXPECT_EQ(again.failure, WorkerFailure::kDied);
  EXPECT_NE(again.detail.find("not running"), std::string::npos) << again.detail;
  EXPECT_EQ(again.term_signal, SIGSEGV);
}

TEST_F(ProcessWorkerTest, PythonSegvIsDied) {
  REQUIRE_PYTHON();
  auto w = StartPython();
  ASSERT_TRUE(w);
  WorkerReply r = CallOp(*w, {{"op", "segv"}});
  EXPECT_EQ(r.failure, WorkerFailure::kDied);
  EXPECT_EQ(r.detail, "worker killed by signal 11 (SIGSEGV)");
}

TEST_F(ProcessWorkerTest, ExitBeforeAnsweringIsDiedWithStatus) {
  REQUIRE_PYTHON();
  auto w = StartPython();
  ASSERT_TRUE(w);
  WorkerReply r = CallOp(*w, {{"op", "exit"}, {"code", 3}});
  EXPECT_EQ(r.failure, WorkerFailure::kDied);
  EXPECT_EQ(r.detail, "worker exited with status 3");
  EXPECT_EQ(r.exit_code, 3);
}

TEST_F(ProcessWorkerTest, HangingWorkerTimesOutAndIsKilled) {
  auto w = StartShell("read line <&3; sleep 3600");
  ASSERT_TRUE(w);
  pid_t pid = w->pid();
  auto start = std::chrono::steady_clock::now();
  WorkerReply r = CallOp(*w, {{"op", "hang"}}, milliseconds(300));
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(3));
  EXPECT_EQ(r.failure, WorkerFailure::kTimeout);
  EXPECT_EQ(r.detail, "no answer within 300 ms");
  EXPECT_EQ(r.term_signal, SIGKILL);
  EXPECT_FALSE(w->alive());
  EXPECT_TRUE(testing::ProcessGone(pid));
}

TEST_F(ProcessWorkerTest, GarbageOnResponsePipeIsProtocolViolation) {
  REQUIRE_PYTHON();
  auto w = StartPython();
  ASSERT_TRUE(w);
  pid_t pid = w->pid();
  WorkerReply r = CallOp(*w, {{"op", "garbage"}});
  EXPECT_EQ(r.failure, WorkerFailure::kProtocol);
  EXPECT_TRUE(r.detail.starts_with("invalid JSON from worker: ")) << r.detail;
  EXPECT_NE(r.detail.find("this is not json"), std::string::npos) << r.detail;
  EXPECT_FALSE(w->alive());
  EXPECT_TRUE(testing::ProcessGone(pid));
}

TEST_F(ProcessWorkerTest, NonObjectAndWrongIdAreProtocolViolations) {
  REQUIRE_PYTHON();
  auto w = StartPython();
  ASSERT_TRUE(w);
  WorkerReply r = CallOp(*w, {{"op", "array"}});
  EXPECT_EQ(r.failure, WorkerFailure::kProtocol);
  EXPECT_NE(r.detail.find("not a JSON object"), std::string::npos) << r.detail;

  w = StartPython();
  ASSERT_TRUE(w);
  r = CallOp(*w, {{"op", "wrong_id"}});
  EXPECT_EQ(r.failure, WorkerFailure::kProtocol);
  EXPECT_EQ(r.detail, "response id 101 does not match request id 1");
}

TEST_F(ProcessWorkerTest, DeeplyNestedResponseIsRejectedNotCrashing) {
  auto w = StartShell("read line <&3; head -c 1000000 /dev/zero | tr '\\0' '[' >&4; echo >&4; sleep 3600");
  ASSERT_TRUE(w);
  WorkerReply r = CallOp(*w, {{"op", "x"}});
  EXPECT_EQ(r.failure, WorkerFailure::kProtocol);
  EXPECT_NE(r.detail.find("nested deeper"), std::string::npos) << r.detail;
}

TEST_F(ProcessWorkerTest, FloodOfOutputDoesNotBlockAndLogIsBounded) {
  REQUIRE_PYTHON();
  WorkerOptions options;
  options.log_limit = 4096;
  auto w = StartPython(options);
  ASSERT_TRUE(w);
  WorkerReply r = CallOp(*w, {{"op", "flood"}});
  ASSERT_EQ(r.failure, WorkerFailure::kNone) << r.detail;
  EXPECT_EQ(r.response["ok"], true);
  std::string log = w->TakeLog();
  EXPECT_LT(log.size(), 4096u + 100);
  EXPECT_TRUE(log.starts_with("handling flood\nstderr flood\nHEADxxx")) << log.substr(0, 50);
  EXPECT_NE(log.find("bytes omitted ...]"), std::string::npos);
  EXPECT_TRUE(log.ends_with("xxxTAIL\n")) << log.substr(log.size() - 50);
}

TEST_F(ProcessWorkerTest, LargeResponseLine) {
  REQUIRE_PYTHON();
  auto w = StartPython();
  ASSERT_TRUE(w);
  WorkerReply r = CallOp(*w, {{"op", "big"}, {"n", 5'000'000}});
  ASSERT_EQ(r.failure, WorkerFailure::kNone) << r.detail;
  EXPECT_EQ(r.response["data"].get<std::string>().size(), 5'000'000u);
  r = CallOp(*w, {{"op", "echo"}});  // still in step afterwards
  ASSERT_EQ(r.failure, WorkerFailure::kNone);
  EXPECT_EQ(r.response["id"], 2);
}

TEST_F(ProcessWorkerTest, ResponseOverLimitIsProtocolViolation) {
  REQUIRE_PYTHON();
  WorkerOptions options;
  options.max_response_bytes = 1000;
  auto w = StartPython(options);
  ASSERT_TRUE(w);
  WorkerReply r = CallOp(*w, {{"op", "big"}, {"n", 100'000}});
  EXPECT_EQ(r.failure, WorkerFailure::kProtocol);
  EXPECT_EQ(r.detail, "response line longer than 1000 bytes");
}

TEST_F(ProcessWorkerTest, ResponseSplitAcrossWrites) {
  REQUIRE_PYTHON();
  auto w = StartPython();
  ASSERT_TRUE(w);
  WorkerReply r = CallOp(*w, {{"op", "split"}});
  ASSERT_EQ(r.failure, WorkerFailure::kNone) << r.detail;
  EXPECT_EQ(r.response["split"], true);
}

TEST_F(ProcessWorkerTest, GrandchildIsKilledWithTheGroupOnTimeout) {
  REQUIRE_PYTHON();
  auto w = StartPython();
  ASSERT_TRUE(w);
  ASSERT_EQ(CallOp(*w, {{"op", "echo"}}).failure, WorkerFailure::kNone);  // started up
  std::string pidfile = dir_->Join("grandchild.pid");
  WorkerReply r = CallOp(*w, {{"op", "grandchild"}, {"pidfile", pidfile}}, milliseconds(1500));
  EXPECT_EQ(r.failure, WorkerFailure::kTimeout);
  pid_t grandchild = testing::ReadPidFile(pidfile);
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(testing::ProcessGone(grandchild));
}

TEST_F(ProcessWorkerTest, DestructorKillsGroupAndReaps) {
  REQUIRE_PYTHON();
  auto w = StartPython();
  ASSERT_TRUE(w);
  pid_t pid = w->pid();
  std::string pidfile = dir_->Join("grandchild.pid");
  WorkerReply r = CallOp(*w, {{"op", "grandchild"}, {"pidfile", pidfile}, {"answer", true}});
  ASSERT_EQ(r.failure, WorkerFailure::kNone) << r.detail;
  pid_t grandchild = testing::ReadPidFile(pidfile);
  ASSERT_GT(grandchild, 0);
  w.reset();
  EXPECT_TRUE(testing::ProcessGone(grandchild));
  EXPECT_NE(::kill(pid, 0), 0);  // gone and reaped (not a zombie of ours)
}

TEST_F(ProcessWorkerTest, KillIsIdempotent) {
  REQUIRE_PYTHON();
  auto w = StartPython();
  ASSERT_TRUE(w);
  pid_t pid = w->pid();
  w->Kill();
  w->Kill();
  EXPECT_FALSE(w->alive());
  EXPECT_NE(::kill(pid, 0), 0);
  EXPECT_EQ(CallOp(*w, {{"op", "echo"}}).failure, WorkerFailure::kDied);
}

TEST_F(ProcessWorkerTest, AnswerThenDeathKeepsTheAnswer) {
  REQUIRE_PYTHON();
  auto w = StartPython();
  ASSERT_TRUE(w);
  WorkerReply r = CallOp(*w, {{"op", "answer_then_die"}});
  ASSERT_EQ(r.failure, WorkerFailure::kNone) << r.detail;
  EXPECT_EQ(r.response["ok"], true);
  r = CallOp(*w, {{"op", "echo"}});
  EXPECT_EQ(r.failure, WorkerFailure::kDied);
  EXPECT_EQ(r.detail, "worker exited with status 0");
}

TEST_F(ProcessWorkerTest, ShutdownThenNotAlive) {
  REQUIRE_PYTHON();
  auto w = StartPython();
  ASSERT_TRUE(w);
  WorkerReply r = CallOp(*w, {{"op", "shutdown"}});
  ASSERT_EQ(r.failure, WorkerFailure::kNone);
  auto deadline = std::chrono::steady_clock::now() + seconds(5);
  while (w->alive() && std::chrono::steady_clock::now() < deadline) ::usleep(5000);
  EXPECT_FALSE(w->alive());
}

TEST_F(ProcessWorkerTest, ClosedResponsePipeIsProtocolViolation) {
  REQUIRE_PYTHON();
  auto w = StartPython();
  ASSERT_TRUE(w);
  WorkerReply r = CallOp(*w, {{"op", "close_responses"}});
  EXPECT_EQ(r.failure, WorkerFailure::kProtocol);
  EXPECT_EQ(r.detail, "worker closed its response pipe (fd 4) but kept running");
}

TEST_F(ProcessWorkerTest, WorkerThatClosedRequestsDoesNotRaiseSigpipe) {
  // The worker closes fd 3 and exits; the request write meets a broken pipe. With
  // SIGPIPE at its default disposition, a raised SIGPIPE would end this test binary.
  struct sigaction dfl {}, old {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGPIPE, &dfl, &old);
  auto w = StartShell("exec 3<&-; sleep 0.3; exit 4");
  ASSERT_TRUE(w);
  ::usleep(100 * 1000);
  WorkerReply r = CallOp(*w, {{"op", "hello"}, {"pad", std::string(2 << 20, 'p')}});
  EXPECT_EQ(r.failure, WorkerFailure::kDied);
  EXPECT_EQ(r.detail, "worker exited with status 4");
  ::sigaction(SIGPIPE, &old, nullptr);
}

TEST_F(ProcessWorkerTest, WorkerNotReadingRequestsTimesOut) {
  // A request larger than the pipe buffer cannot be written in full; the call must
  // still honour its timeout.
  auto w = StartShell("sleep 3600");
  ASSERT_TRUE(w);
  auto start = std::chrono::steady_clock::now();
  WorkerReply r = CallOp(*w, {{"op", "hello"}, {"pad", std::string(8 << 20, 'p')}}, milliseconds(300));
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(3));
  EXPECT_EQ(r.failure, WorkerFailure::kTimeout);
}

TEST_F(ProcessWorkerTest, SupervisesWithoutExitFd) {
  ChildProcess::DisableExitFdForTesting(true);
  auto crash = StartShell("read line <&3; kill -SEGV $$");
  auto hang = StartShell("read line <&3; sleep 3600");
  ChildProcess::DisableExitFdForTesting(false);
  ASSERT_TRUE(crash && hang);
  WorkerReply r = CallOp(*crash, {{"op", "x"}});
  EXPECT_EQ(r.failure, WorkerFailure::kDied);
  EXPECT_EQ(r.detail, "worker killed by signal 11 (SIGSEGV)");
  r = CallOp(*hang, {{"op", "x"}}, milliseconds(200));
  EXPECT_EQ(r.failure, WorkerFailure::kTimeout);
}

TEST_F(ProcessWorkerTest, StartFailsForMissingProgram) {
  WorkerOptions options;
  options.argv = {"kvault-no-such-python", "-m", "kvault_worker"};
  auto w = ProcessWorker::Start(options);
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().find("kvault-no-such-python"), std::string::npos) << w.error();
}

TEST_F(ProcessWorkerTest, WorkerFdsVariableIsSet) {
  auto w = StartShell(
      "read line <&3; id=$(echo \"$line\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/'); "
      "echo \"{\\\"id\\\":$id,\\\"ok\\\":true,\\\"fds\\\":\\\"$KVAULT_WORKER_FDS\\\"}\" >&4; sleep 3600");
  ASSERT_TRUE(w);
  WorkerReply r = CallOp(*w, {{"op", "hello"}});
  ASSERT_EQ(r.failure, WorkerFailure::kNone) << r.detail;
  EXPECT_EQ(r.response["fds"], "3,4");
}

}  // namespace
}  // namespace kvault
