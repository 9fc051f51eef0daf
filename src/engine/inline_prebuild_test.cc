// InlinePrebuild with scripted workers and a fake compile pool: a KernelBench file's
// load_inline calls are noted in a worker of its own with the devices hidden, and the
// builds the lane would ask for are queued; nothing else is.
#include "engine/inline_prebuild.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "engine/inline_record.h"
#include "engine/testing/test_cache.h"
#include "util/files.h"
#include "worker/fake_worker.h"
#include "worker/protocol.h"

namespace kvault {
namespace {

using std::chrono::milliseconds;

// A call InlineUnitFor builds: C++ only, one function, `flag` among its cflags.
Json CppCall(const std::string& body, const std::string& flag) {
  return Json{{"cpp_sources", {body}}, {"cuda_sources", Json::array()},
              {"functions", Json::array({Json::array({"f", "f"})})},
              {"extra_cflags", {flag}}, {"extra_cuda_cflags", Json::array()},
              {"extra_ldflags", Json::array()}, {"extra_include_paths", Json::array()},
              {"with_cuda", nullptr}, {"is_python_module", true}, {"with_pytorch_error_handling", true},
              {"other", Json::object()}, {"digest", std::string(64, 'a')}};
}

class InlinePrebuildTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(cache_.ok()); }

  WorkerFactory Factory() {
    return [this](const WorkerOptions& o) -> Result<std::unique_ptr<WorkerConnection>> {
      auto w = std::make_unique<FakeWorker>();
      w->Handle("hello", [](const Json&) {
        return FakeWorker::Ok(Json{{"protocol", protocol::kVersion}, {"torch", "t"}, {"python", "p"},
                                   {"device", {{"name", "cpu"}, {"arch", "x86_64"}}}, {"build", Json::object()}});
      });
      w->Handle("record_inline", [this](const Json& r) {
        std::lock_guard<std::mutex> lock(mu_);
        records_.push_back(r);
        return record_(r);
      });
      std::lock_guard<std::mutex> lock(mu_);
      started_.push_back(o);
      return std::unique_ptr<WorkerConnection>(std::move(w));
    };
  }

  // A pool whose builds note what they were asked to build and the text they read.
  CompilePool& Pool() {
    pool_ = std::make_unique<CompilePool>(2, [this](const BuildRequest& r, milliseconds) -> Result<BuildResult> {
      auto text = ReadFile(r.source_path);
      std::lock_guard<std::mutex> lock(mu_);
      built_.push_back({r, text ? *text : "<unreadable>"});
      return BuildResult{};
    });
    return *pool_;
  }

  Candidate File(const std::string& name, const std::string& source,
                 CandidateFormat format = CandidateFormat::kKernelBench) {
    return Candidate{cache_.path() + "/" + name, source, format, "python", "h-" + name};
  }

  // Waits until `files` were noted and the pool built what they queued.
  void Finish(InlinePrebuild& ahead, size_t files) {
    for (int i = 0; i < 500 && ahead.noted() < files; ++i) std::this_thread::sleep_for(milliseconds(10));
    EXPECT_EQ(ahead.noted(), files);
    for (int i = 0; i < 500 && pool_->built() < ahead.queued_builds(); ++i) std::this_thread::sleep_for(milliseconds(10));
    std::lock_guard<std::mutex> lock(mu_);
    EXPECT_EQ(built_.size(), ahead.queued_builds());
  }

  Json Hello() {
    return Json{{"protocol", protocol::kVersion}, {"torch", "t"},
                {"build", {{"include_paths", {"/torch/include"}}, {"library_paths", {"/torch/lib"}}, {"libraries", {"torch"}},
                           {"python_include", "/py"}, {"cxx_standard", "c++17"}}}};
  }

  struct Built {
    BuildRequest request;
    std::string text;
  };
  kvault::testing::TestCache cache_;
  std::unique_ptr<CompilePool> pool_;
  std::function<WorkerReply(const Json&)> record_;
  std::mutex mu_;
  std::vector<Json> records_;
  std::vector<WorkerOptions> started_;
  std::vector<Built> built_;
};

TEST_F(InlinePrebuildTest, AFilesCallsAreBuiltAsTheLaneAsksForThem) {
  record_ = [](const Json&) {
    return FakeWorker::Ok(Json{{"calls", Json::array({CppCall("int f() { return 1; }", "-O3"),
                                                      CppCall("int f() { return 2; }", "-O1")})}});
  };
  InlinePrebuild ahead(cache_.options, Hello(), Pool(), Factory());
  ahead.Submit(File("a.py", "from torch.utils.cpp_extension import load_inline"), "/tasks/a.py");
  Finish(ahead, 1);
  ASSERT_EQ(records_.size(), 1u);
  EXPECT_EQ(records_[0]["candidate"]["path"], cache_.path() + "/a.py");
  EXPECT_FALSE(records_[0].contains("task"));  // it called at import: not constructed
  ASSERT_EQ(built_.size(), 2u);
  std::sort(built_.begin(), built_.end(), [](const Built& x, const Built& y) { return x.text < y.text; });
  for (size_t i = 0; i < 2; ++i) {
    auto unit = InlineUnitFor(CppCall("int f() { return " + std::to_string(i + 1) + "; }", i == 0 ? "-O3" : "-O1"));
    ASSERT_TRUE(unit) << unit.error();
    EXPECT_EQ(built_[i].text, unit->source);  // the text the lane writes, so the same cache entry
    EXPECT_EQ(built_[i].request.extra_flags, unit->extra_flags);
    EXPECT_EQ(built_[i].request.backend, Backend::kCpu);
    EXPECT_EQ(built_[i].request.kind, SourceKind::kTorchExtension);
    EXPECT_TRUE(built_[i].request.lite_only);  // a source the lite way rejects is its lane's
  }
  EXPECT_EQ(ahead.queued_builds(), 2u);
}

TEST_F(InlinePrebuildTest, AFileCallingInItsConstructorIsNotedWithItsTask) {
  record_ = [](const Json& r) {
    return FakeWorker::Ok(Json{{"calls", r.contains("task") ? Json::array({CppCall("int f() { return 3; }", "-O2")})
                                                            : Json::array()}});
  };
  InlinePrebuild ahead(cache_.options, Hello(), Pool(), Factory());
  ahead.Submit(File("b.py", "load_inline"), "/tasks/b.py");
  Finish(ahead, 1);
  ASSERT_EQ(records_.size(), 2u);
  EXPECT_EQ(records_[1]["task"], "/tasks/b.py");
  EXPECT_EQ(built_.size(), 1u);
}

// Each file runs in a fresh worker that sees no device; a file whose record fails
// queues nothing and the next file is noted all the same.
TEST_F(InlinePrebuildTest, EachFileRunsInAFreshWorkerWithoutDevices) {
  record_ = [](const Json& r) {
    if (r["candidate"]["path"].get<std::string>().find("crash") != std::string::npos)
      return WorkerReply{WorkerFailure::kDied, Json(), "worker killed by signal 11 (SIGSEGV)", -1, 11};
    return FakeWorker::Ok(Json{{"calls", Json::array({CppCall("int f() { return 4; }", "-O2")})}});
  };
  InlinePrebuild ahead(cache_.options, Hello(), Pool(), Factory());
  ahead.Submit(File("crash.py", "load_inline"), "/tasks/t.py");
  ahead.Submit(File("c.py", "load_inline"), "/tasks/t.py");
  Finish(ahead, 2);
  EXPECT_EQ(built_.size(), 1u);
  ASSERT_GE(started_.size(), 2u);
  for (const WorkerOptions& o : started_) {
    bool hidden = false;
    for (const auto& [name, value] : o.env_set) hidden |= name == "CUDA_VISIBLE_DEVICES" && value.empty();
    EXPECT_TRUE(hidden);
  }
}

TEST_F(InlinePrebuildTest, OnlyKernelBenchFilesNamingLoadInlineAreNoted) {
  record_ = [](const Json&) { return FakeWorker::Ok(Json{{"calls", Json::array()}}); };
  InlinePrebuild ahead(cache_.options, Hello(), Pool(), Factory());
  ahead.Submit(File("plain.py", "class ModelNew: pass"), "/tasks/t.py");
  ahead.Submit(File("ext.cpp", "load_inline", CandidateFormat::kExtension), "/tasks/t.py");
  ahead.Submit(File("d.py", "load_inline"), "/tasks/t.py");
  Finish(ahead, 1);
  ASSERT_EQ(records_.size(), 2u);  // d.py alone, then with its model: nothing was noted
  EXPECT_EQ(records_[0]["candidate"]["path"], cache_.path() + "/d.py");
  EXPECT_TRUE(built_.empty());
}

}  // namespace
}  // namespace kvault
