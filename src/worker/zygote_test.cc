#include "worker/zygote.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>

#include "util/env.h"
#include "util/files.h"
#include "util/testing/process_helpers.h"

namespace kvault {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// The worker the zygote forks in these tests (KVAULT_ZYGOTE_ENTRY): imported once by
// the zygote, main() runs in every fork.
constexpr const char* kFakeWorker = R"PY(
import json, os, signal, subprocess, sys, time

def main():
    req_fd, resp_fd = (int(x) for x in os.environ["KVAULT_WORKER_FDS"].split(","))
    requests = os.fdopen(req_fd, "r")
    responses = os.fdopen(resp_fd, "w")
    for line in requests:
        req = json.loads(line)
        op = req["op"]
        print("handling", op, flush=True)
        if op == "echo":
            responses.write(json.dumps(dict(id=req["id"], ok=True, cwd=os.getcwd(), proc_self=os.readlink("/proc/self"),
                                            getpid=os.getpid(), home=os.environ.get("HOME"))) + "\n")
            responses.flush()
        elif op == "segv":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif op == "exit":
            return req["code"]
        elif op == "escape":
            if os.fork() == 0:
                os.setsid()
                import ctypes
                ctypes.CDLL(None).prctl(15, req["name"].encode(), 0, 0, 0)  # PR_SET_NAME: findable from outside
                with open(req["pidfile"], "w") as f:
                    f.write(os.readlink("/proc/self"))  # the pid as the worker's /proc numbers it
                time.sleep(3600)
            time.sleep(3600)
        elif op == "hang":
            time.sleep(3600)
    return 0
)PY";

bool HavePython() {
  static const bool have = ::system("python3 -c 'pass' >/dev/null 2>&1") == 0;
  return have;
}

class ZygoteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HavePython()) GTEST_SKIP() << "python3 not found on PATH";
    auto root = GetEnv("KVAULT_SOURCE_ROOT");
    if (!root) GTEST_SKIP() << "KVAULT_SOURCE_ROOT is not set (ctest sets it)";
    auto d = TempDir::Create("", "zygote-test");
    ASSERT_TRUE(d) << d.error();
    dir_.emplace(std::move(*d));
    std::ofstream(dir_->path() + "/fake_zworker.py") << kFakeWorker;
    WorkerOptions options;
    options.argv = {"python3", "-m", "kvault_worker.zygote"};
    options.env_set = {{"PYTHONPATH", *root + "/python:" + dir_->path()},
                       {"KVAULT_ZYGOTE_ENTRY", "fake_zworker:main"}};
    options.cwd = dir_->path();
    auto z = Zygote::Start(options, seconds(30));
    ASSERT_TRUE(z) << z.error();
    zygote_ = std::move(*z);
  }

  std::unique_ptr<ProcessWorker> Fork() {
    auto w = zygote_->Fork(WorkerOptions{}, seconds(10));
    EXPECT_TRUE(w) << w.error();
    return w ? std::move(*w) : nullptr;
  }

  std::optional<TempDir> dir_;
  std::unique_ptr<Zygote> zygote_;
};

TEST_F(ZygoteTest, EachForkIsAFreshWorkerInItsOwnFolder) {
  auto a = Fork();
  auto b = Fork();
  ASSERT_TRUE(a && b);
  WorkerReply ra = a->Call(Json{{"op", "echo"}}, seconds(10));
  WorkerReply rb = b->Call(Json{{"op", "echo"}}, seconds(10));
  ASSERT_EQ(ra.failure, WorkerFailure::kNone) << ra.detail;
  ASSERT_EQ(rb.failure, WorkerFailure::kNone) << rb.detail;
  EXPECT_NE(ra.response["cwd"], rb.response["cwd"]);
  if (zygote_->pid_namespace()) {
    // Its own /proc: pids and /proc agree (CUDA needs that), no other process is seen.
    EXPECT_EQ(ra.response["proc_self"], std::to_string(ra.response["getpid"].get<int>()));
    EXPECT_EQ(ra.response["getpid"], rb.response["getpid"]);  // the same place in two namespaces
  } else {
    EXPECT_NE(ra.response["getpid"], rb.response["getpid"]);
  }
  EXPECT_EQ(ra.response["cwd"], ra.response["home"]);
  // Unnamed (as with the sandbox off), each folder is the zygote's pick, in a private
  // folder of its own: not in its working directory, which other lanes' zygotes share.
  const std::string cwd = ra.response["cwd"].get<std::string>();
  EXPECT_NE(cwd.find("/kvault-zygote-"), std::string::npos) << cwd;
  EXPECT_NE(cwd.rfind(dir_->path() + "/", 0), 0u) << cwd;
  EXPECT_NE(a->TakeLog().find("handling echo"), std::string::npos);
}

TEST_F(ZygoteTest, TheEngineNamesTheWorkersFolderDirectlyInTheZygotes) {
  WorkerOptions named;
  named.cwd = dir_->path() + "/w-named";
  auto w = zygote_->Fork(named, seconds(10));
  ASSERT_TRUE(w) << w.error();
  WorkerReply r = (*w)->Call(Json{{"op", "echo"}}, seconds(10));
  ASSERT_EQ(r.failure, WorkerFailure::kNone) << r.detail;
  EXPECT_EQ(r.response["cwd"], named.cwd);
  // Anywhere but directly in the zygote's folder: the zygote picks the folder itself.
  WorkerOptions deeper;
  deeper.cwd = dir_->path() + "/sub/w-deeper";
  w = zygote_->Fork(deeper, seconds(10));
  ASSERT_TRUE(w) << w.error();
  r = (*w)->Call(Json{{"op", "echo"}}, seconds(10));
  ASSERT_EQ(r.failure, WorkerFailure::kNone) << r.detail;
  EXPECT_NE(r.response["cwd"], deeper.cwd);
  EXPECT_EQ(r.response["cwd"].get<std::string>().rfind(dir_->path() + "/w", 0), 0u) << r.response["cwd"];
}

TEST_F(ZygoteTest, WorkerThatSignalsItselfIsDiedWithTheSignal) {
  auto w = Fork();
  ASSERT_TRUE(w);
  WorkerReply r = w->Call(Json{{"op", "segv"}}, seconds(10));
  EXPECT_EQ(r.failure, WorkerFailure::kDied);
  EXPECT_EQ(r.term_signal, SIGSEGV) << r.detail;
  EXPECT_FALSE(w->alive());
}

TEST_F(ZygoteTest, ExitStatusReachesTheEngine) {
  auto w = Fork();
  ASSERT_TRUE(w);
  WorkerReply r = w->Call(Json{{"op", "exit"}, {"code", 3}}, seconds(10));
  EXPECT_EQ(r.failure, WorkerFailure::kDied);
  EXPECT_EQ(r.exit_code, 3) << r.detail;
}

TEST_F(ZygoteTest, HangingWorkerIsKilledOnTimeoutAndTheZygoteForksAgain) {
  auto w = Fork();
  ASSERT_TRUE(w);
  WorkerReply r = w->Call(Json{{"op", "hang"}}, milliseconds(300));
  EXPECT_EQ(r.failure, WorkerFailure::kTimeout);
  EXPECT_FALSE(w->alive());
  auto again = Fork();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->Call(Json{{"op", "echo"}}, seconds(10)).failure, WorkerFailure::kNone);
}

TEST_F(ZygoteTest, KillingTheWorkerKillsWhatItStartedInItsGroup) {
  // Without a PID namespace (no user namespaces in this test) the keeper's process
  // group holds the worker's children; a child that calls setsid() itself escapes
  // that, which only the sandbox's PID namespaces contain (test_sandbox.sh).
  auto w = Fork();
  ASSERT_TRUE(w);
  const std::string pidfile = dir_->path() + "/escapee.pid";
  const std::string name = "kvz-esc-" + std::to_string(::getpid() % 1000000);
  WorkerReply r = w->Call(Json{{"op", "escape"}, {"pidfile", pidfile}, {"name", name}}, milliseconds(500));
  EXPECT_EQ(r.failure, WorkerFailure::kTimeout);
  pid_t escapee = testing::ReadPidFile(pidfile);  // it ran: the file is written after the rename
  ASSERT_GT(escapee, 0);
  if (zygote_->pid_namespace()) {
    // Its pid is the namespace's; from here it is found by its name.
    EXPECT_TRUE(testing::NoProcessNamed(name)) << "the worker's PID namespace outlived it";
  } else {
    ::kill(escapee, SIGKILL);  // documented limit of the unsandboxed mode
  }
}

TEST_F(ZygoteTest, DeadZygoteIsAnErrorNotAHang) {
  ::kill(zygote_->pid(), SIGKILL);
  ASSERT_TRUE(testing::ProcessGone(zygote_->pid()));
  auto w = zygote_->Fork(WorkerOptions{}, seconds(5));
  EXPECT_FALSE(w);
  EXPECT_FALSE(zygote_->alive());
}

TEST(ZygoteStartTest, ZygoteThatCannotStartSaysWhy) {
  if (!HavePython()) GTEST_SKIP() << "python3 not found on PATH";
  WorkerOptions options;
  options.argv = {"python3", "-c", "import sys; print('no zygote here'); sys.exit(4)"};
  auto z = Zygote::Start(options, seconds(10));
  ASSERT_FALSE(z);
  EXPECT_NE(z.error().find("no zygote here"), std::string::npos) << z.error();
}

}  // namespace
}  // namespace kvault
