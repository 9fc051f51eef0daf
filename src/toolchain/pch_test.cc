// Precompiled headers: which sources qualify, the key, and building the entry with
// fake compiler scripts. The real g++ path is in real_compiler_test.cc.
#include "toolchain/pch.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "toolchain/build_key.h"
#include "toolchain/fake_compiler_for_test.h"
#include "util/child_process.h"
#include "util/files.h"

namespace kvault {
namespace {

using std::chrono::milliseconds;
using testing::FakeCompiler;

constexpr milliseconds kTimeout{20'000};

TEST(PchApplies, WhenTorchExtensionIsTheFirstNonStandardInclude) {
  for (const char* src : {
           "#include <torch/extension.h>\n",
           "// comment\n\n/* block\n comment */\n#include <torch/extension.h>\nint x;\n",
           "#include <cmath>\n#include <limits>\n#include<cstdint>\n#  include <torch/extension.h>\n",
           "#include <cmath>  // for expf\n#include <torch/extension.h> /* here */\n",
           "\xEF\xBB\xBF#include <torch/extension.h>\r\n",
           "#include <vector>\r\n#include <torch/extension.h>\r\n",
       })
    EXPECT_TRUE(PchApplies(src)) << src;
}

TEST(PchApplies, NotWhenAnythingCouldChangeHowTorchReads) {
  for (const char* src : {
           "",
           "int forward();\n",                                         // no torch at all
           "#include <cstdint>\nint f();\n#include <torch/extension.h>\n",  // code first
           "#define NDEBUG\n#include <torch/extension.h>\n",            // a macro first
           "#pragma GCC optimize(\"O3\")\n#include <torch/extension.h>\n",
           "#include <ATen/ATen.h>\n#include <torch/extension.h>\n",    // another header
           "#include <math.h>\n#include <torch/extension.h>\n",
           "#include \"torch/extension.h\"\n",                          // may be a local file
           "#include <torch/torch.h>\n",
           "// trailing backslash continues the comment \\\n#define X\n#include <torch/extension.h>\n",
           "#include <cmath> int x;\n#include <torch/extension.h>\n",
           "/* unterminated\n#include <torch/extension.h>\n",
           "#include <torch/extension.h\n",
           "#ifdef X\n#include <torch/extension.h>\n#endif\n",
       })
    EXPECT_FALSE(PchApplies(src)) << src;
}

class PchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("KVAULT_LITE_EXT", "0", 1);  // the lite build: lite_ext_test.cc
    work_ = std::make_unique<TempDir>(TempDir::Create("", "kvault-pchtest").value());
  }
  BuildRequest Request() const {
    BuildRequest r;
    r.source_path = work_->Join("relu.cpp");
    r.torch.include_paths = {work_->Join("torch-include")};
    r.torch.library_paths = {work_->Join("torch-lib")};
    r.torch.python_include = "/py";
    r.torch.torch_version = "1.13.0";
    return r;
  }
  CompilerSetup Setup(const std::string& path = "/usr/bin/g++") const {
    CompilerSetup s;
    s.tool = Tool::kCxx;
    s.tool_path = path;
    return s;
  }
  std::string Key(const BuildRequest& r, const std::string& identity = "g++ 12.2.0") const {
    auto k = PchKey(r, Setup(), identity);
    EXPECT_TRUE(k.ok()) << k.error();
    return k.ok() ? k->Hex() : "";
  }
  std::string Cache() const { return work_->Join("cache"); }

  std::unique_ptr<TempDir> work_;
};

TEST_F(PchTest, OneKeyForEveryCandidateOfAToolchain) {
  BuildRequest other = Request();
  other.source_path = work_->Join("other.cpp");
  other.compile_only = true;  // same compile flags: -c and -shared are not among them
  EXPECT_EQ(Key(Request()), Key(other));
}

TEST_F(PchTest, EveryCompileInputChangesTheKey) {
  std::vector<std::string> keys = {Key(Request())};
  auto expect_new = [&](const std::string& key, const char* what) {
    for (const std::string& k : keys) EXPECT_NE(key, k) << what;
    keys.push_back(key);
  };
  BuildRequest r = Request();
  r.extra_flags = {"-DX=1"};
  expect_new(Key(r), "extra flag");
  r = Request();
  r.torch.cxx11_abi = false;
  expect_new(Key(r), "abi");
  r = Request();
  r.torch.include_paths.push_back("/more");
  expect_new(Key(r), "include path");
  r = Request();
  r.torch.python_include = "/py2";
  expect_new(Key(r), "python include");
  r = Request();
  r.torch.torch_version = "1.13.1";
  expect_new(Key(r), "torch version");
  expect_new(Key(Request(), "g++ 12.3.0"), "compiler identity");
  ASSERT_TRUE(EnsureDir(work_->Join("torch-include/torch")).ok());
  ASSERT_TRUE(WriteFileAtomic(work_->Join("torch-include/torch/version.h"), "#define TORCH_VERSION 1").ok());
  expect_new(Key(Request()), "torch/version.h");
  auto k = PchKey(Request(), Setup(), "g++ 12.2.0");
  ASSERT_TRUE(k.ok());
  EXPECT_NE(k->Describe().find("kvault-pch"), std::string::npos);
  EXPECT_NE(k->Describe().find("torch_version_header"), std::string::npos);
}

TEST_F(PchTest, BuildsOnceIntoTheCacheThenReusesIt) {
  FakeCompiler cc(FakeCompiler::kWritesOutput);
  auto first = EnsurePrecompiledHeader(Request(), Setup(cc.path()), "g++ 9.9.9", Cache(), kTimeout);
  ASSERT_TRUE(first.ok()) << first.error();
  std::string hex = PchKey(Request(), Setup(cc.path()), "g++ 9.9.9")->Hex();
  std::string dir = Cache() + "/pch/" + hex.substr(0, 2) + "/" + hex;
  EXPECT_EQ(*first, dir + "/kvault_torch_pch.h");
  EXPECT_EQ(*ReadFile(*first), PchHeaderText());
  EXPECT_EQ(*ReadFile(*first + ".gch"), "object built by fakecc\n");
  auto meta = ReadFile(dir + "/build.json");
  ASSERT_TRUE(meta.ok());
  EXPECT_NE(meta->find("c++-header"), std::string::npos);
  EXPECT_EQ(meta->find("TORCH_EXTENSION_NAME"), std::string::npos);
  EXPECT_EQ(cc.Calls(), 1);

  auto again = EnsurePrecompiledHeader(Request(), Setup(cc.path()), "g++ 9.9.9", Cache(), kTimeout);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *first);
  EXPECT_EQ(cc.Calls(), 1);
  // A damaged entry (its header deleted) is detected, removed and built again.
  ASSERT_EQ(::unlink(first->c_str()), 0);
  ASSERT_TRUE(EnsurePrecompiledHeader(Request(), Setup(cc.path()), "g++ 9.9.9", Cache(), kTimeout).ok());
  EXPECT_EQ(*ReadFile(*first), PchHeaderText());
  EXPECT_EQ(cc.Calls(), 2);
}

TEST_F(PchTest, ARejectedHeaderIsRememberedNotRetried) {
  FakeCompiler cc(FakeCompiler::kRejects);
  auto first = EnsurePrecompiledHeader(Request(), Setup(cc.path()), "g++ 9.9.9", Cache(), kTimeout);
  ASSERT_FALSE(first.ok());
  EXPECT_NE(first.error().find("exited with status 1"), std::string::npos) << first.error();
  std::string hex = PchKey(Request(), Setup(cc.path()), "g++ 9.9.9")->Hex();
  auto failed = ReadFile(Cache() + "/pch/" + hex.substr(0, 2) + "/" + hex + "/failed.json");
  ASSERT_TRUE(failed.ok());
  EXPECT_NE(failed->find("expected ';'"), std::string::npos);
  auto second = EnsurePrecompiledHeader(Request(), Setup(cc.path()), "g++ 9.9.9", Cache(), kTimeout);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().find("failed.json"), std::string::npos);
  EXPECT_EQ(cc.Calls(), 1);
}

TEST_F(PchTest, ATimeoutIsNotRemembered) {
  FakeCompiler cc(FakeCompiler::kHangs);
  auto first = EnsurePrecompiledHeader(Request(), Setup(cc.path()), "g++ 9.9.9", Cache(), milliseconds(300));
  ASSERT_FALSE(first.ok());
  EXPECT_NE(first.error().find("timeout"), std::string::npos) << first.error();
  auto again = EnsurePrecompiledHeader(Request(), Setup(cc.path()), "g++ 9.9.9", Cache(), milliseconds(300));
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().find("timeout"), std::string::npos) << again.error();
  EXPECT_EQ(cc.Calls(), 2);  // tried again: a timeout says nothing about the header
}

// An interrupted command's stop (ChildProcess::StopAll) kills the compiler in flight:
// that is no failure of the header (not said, not kept), and while stopping no
// preparation starts again.
TEST_F(PchTest, AStoppedPreparationIsNoFailureAndNoneStartsWhileStopping) {
  FakeCompiler cc(FakeCompiler::kHangs);
  std::thread stop([&] {
    for (int i = 0; i < 400 && cc.Calls() == 0; ++i) std::this_thread::sleep_for(milliseconds(25));
    ChildProcess::StopAll();
  });
  ::testing::internal::CaptureStderr();
  auto first = EnsurePrecompiledHeader(Request(), Setup(cc.path()), "g++ 9.9.9", Cache(), kTimeout);
  auto again = EnsurePrecompiledHeader(Request(), Setup(cc.path()), "g++ 9.9.9", Cache(), kTimeout);
  const std::string said = ::testing::internal::GetCapturedStderr();
  stop.join();
  ChildProcess::ResetStopForTesting();
  ASSERT_FALSE(first.ok());
  EXPECT_NE(first.error().find("stopped"), std::string::npos) << first.error();
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().find("stopped"), std::string::npos) << again.error();
  EXPECT_EQ(cc.Calls(), 1);
  EXPECT_EQ(said.find("failed"), std::string::npos) << said;
  EXPECT_EQ(said.find("preparing"), said.rfind("preparing")) << said;  // announced once
  std::string hex = PchKey(Request(), Setup(cc.path()), "g++ 9.9.9")->Hex();
  EXPECT_FALSE(FileExists(Cache() + "/pch/" + hex.substr(0, 2) + "/" + hex + "/failed.json"));
}

TEST_F(PchTest, OnlyForGxx) {
  BuildRequest r = Request();
  r.language = Language::kCuda;
  r.backend = Backend::kCuda;
  CompilerSetup nvcc = Setup();
  nvcc.tool = Tool::kNvcc;
  EXPECT_FALSE(EnsurePrecompiledHeader(r, nvcc, "nvcc", Cache(), kTimeout).ok());
}

}  // namespace
}  // namespace kvault
