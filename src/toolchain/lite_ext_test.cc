// The lite extension build (toolchain/lite_ext.h) through BuildExtension, with fake
// compiler scripts: its object, its own key, what excludes a source, and every
// fallback to the full build. The lite headers against PyTorch's own:
// real_compiler_test.cc.
#include "toolchain/lite_ext.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "toolchain/build.h"
#include "toolchain/fake_compiler_for_test.h"
#include "util/files.h"
#include "util/json.h"
#include "util/strings.h"

namespace kvault {
namespace {

using std::chrono::milliseconds;
using testing::FakeCompiler;

constexpr milliseconds kTimeout{20'000};

CompilerSetup CompilerAt(Tool tool, const std::string& path) {
  CompilerSetup setup;
  setup.tool = tool;
  setup.tool_path = path;
  return setup;
}
constexpr char kSource[] =
    "#include <torch/extension.h>\n"
    "torch::Tensor forward(torch::Tensor x) { return x.relu(); }\n"
    "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"forward\", &forward); }\n";

class LiteExtTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = std::make_unique<TempDir>(TempDir::Create("", "kvault-liteexttest").value());
    source_ = work_->Join("relu.cpp");
    Write(kSource);
    unsetenv("KVAULT_LITE_EXT");
  }
  void TearDown() override {
    unsetenv("KVAULT_LITE_EXT");
    unsetenv("KVAULT_CXX");
    unsetenv("KVAULT_NVCC");
  }
  void Write(const std::string& text) { ASSERT_TRUE(WriteFileAtomic(source_, text).ok()); }
  void UseCompiler(const FakeCompiler& cc) { setenv("KVAULT_CXX", cc.path().c_str(), 1); }

  BuildRequest Request() const {
    BuildRequest r;
    r.source_path = source_;
    r.torch.include_paths = {work_->Join("torch-include")};
    r.torch.library_paths = {work_->Join("torch-lib")};
    r.torch.torch_version = "1.13.0";
    r.cache_dir = work_->Join("cache");
    return r;
  }

  std::unique_ptr<TempDir> work_;
  std::string source_;
};

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST_F(LiteExtTest, BuildsWithTheLiteHeadersAndLinksTheObject) {
  FakeCompiler cc(FakeCompiler::kWritesOutput);
  UseCompiler(cc);
  auto first = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(first.ok()) << first.error();
  ASSERT_TRUE(first->ok) << first->diagnostics;
  EXPECT_TRUE(first->lite_ext) << first->lite_ext_note;
  EXPECT_EQ(first->lite_ext_note, "");
  EXPECT_EQ(cc.Calls(), 2);  // the lite object, then the candidate
  EXPECT_TRUE(Has(first->command, "-I " + DefaultIncludeLiteDir() + " ")) << first->command;
  EXPECT_TRUE(Has(first->command, source_ + " " + work_->Join("cache") + "/pch/")) << first->command;
  EXPECT_TRUE(Has(first->command, "/kvault_lite.o -shared")) << first->command;
  EXPECT_FALSE(Has(first->command, "KVAULT_LITE_HALF")) << first->command;
  EXPECT_FALSE(first->pch);
  EXPECT_EQ(first->toolchain, "g++ 9.9.9 (lite extension build)");
  auto meta = Json::parse(*ReadFile(work_->Join("cache") + "/build/" + first->key.substr(0, 2) + "/" +
                                    first->key + "/build.json"));
  EXPECT_EQ(meta["lite_ext"], true);

  Write(std::string(kSource) + "// another candidate\n");
  auto second = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(second.ok() && second->ok && second->lite_ext);
  EXPECT_EQ(cc.Calls(), 3);  // the object is shared

  Write(kSource);
  auto hit = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(hit.ok());
  EXPECT_TRUE(hit->cache_hit && hit->lite_ext);
  EXPECT_EQ(hit->key, first->key);
  EXPECT_EQ(cc.Calls(), 3);

  setenv("KVAULT_LITE_EXT", "0", 1);
  auto full = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(full.ok() && full->ok);
  EXPECT_FALSE(full->lite_ext);
  EXPECT_FALSE(full->cache_hit);
  EXPECT_NE(full->key, first->key);
  EXPECT_EQ(full->lite_ext_note, "turned off (KVAULT_LITE_EXT=0)");
  EXPECT_FALSE(Has(full->command, "include_lite")) << full->command;
}

TEST_F(LiteExtTest, HalfAndBFloat16GetPyTorchsDefinitions) {
  FakeCompiler cc(FakeCompiler::kWritesOutput);
  UseCompiler(cc);
  Write(std::string(kSource) + "// AT_DISPATCH_FLOATING_TYPES_AND_HALF\n");
  auto r = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(r.ok() && r->ok && r->lite_ext);
  EXPECT_TRUE(Has(r->command, "-DKVAULT_LITE_HALF=1")) << r->command;
  EXPECT_EQ(LiteExtDefines("at::BFloat16* p;"), std::vector<std::string>{"-DKVAULT_LITE_HALF=1"});
  EXPECT_EQ(LiteExtDefines("__half h;"), std::vector<std::string>{"-DKVAULT_LITE_HALF=1"});
  EXPECT_TRUE(LiteExtDefines("float f;").empty());
}

TEST_F(LiteExtTest, ASourceTheLiteHeadersRejectIsBuiltTheFullWay) {
  FakeCompiler cc(FakeCompiler::kWritesOutput, "fakecc (KernelVault test) 9.9.9", "KVAULT_LITE_HALF");
  UseCompiler(cc);
  Write(std::string(kSource) + "// half\n");
  auto r = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_TRUE(r->ok) << r->diagnostics;
  EXPECT_FALSE(r->lite_ext);
  EXPECT_TRUE(Has(r->lite_ext_note, "the lite headers did not compile it (invalid target)")) << r->lite_ext_note;
  EXPECT_FALSE(Has(r->command, "include_lite")) << r->command;
}

// A build made ahead on a guess (lite_only) stops where the lite way stops: the full
// build is left to whoever needs the source.
TEST_F(LiteExtTest, ALiteOnlyBuildNeverTakesTheFullWay) {
  FakeCompiler cc(FakeCompiler::kWritesOutput, "fakecc (KernelVault test) 9.9.9", "KVAULT_LITE_HALF");
  UseCompiler(cc);
  Write(std::string(kSource) + "// half\n");
  BuildRequest req = Request();
  req.lite_only = true;
  auto rejected = BuildExtension(req, kTimeout);
  ASSERT_TRUE(rejected.ok()) << rejected.error();
  EXPECT_FALSE(rejected->ok);
  EXPECT_TRUE(Has(rejected->command, "include_lite")) << rejected->command;  // no full build ran
  const int calls = cc.Calls();
  req.lite_only = false;  // what its lane then does
  auto full = BuildExtension(req, kTimeout);
  ASSERT_TRUE(full.ok() && full->ok && !full->lite_ext);
  EXPECT_GT(cc.Calls(), calls);
  req.lite_only = true;
  Write("#include <torch/script.h>\n" + std::string(kSource));
  auto excluded = BuildExtension(req, kTimeout);
  ASSERT_FALSE(excluded.ok());
  EXPECT_TRUE(Has(excluded.error(), "no <torch/script.h>")) << excluded.error();
  Write(kSource);
  auto built = BuildExtension(req, kTimeout);
  ASSERT_TRUE(built.ok() && built->ok && built->lite_ext);
}

TEST_F(LiteExtTest, WhatExcludesASource) {
  FakeCompiler cc(FakeCompiler::kWritesOutput);
  UseCompiler(cc);
  const std::string lite = DefaultIncludeLiteDir();
  BuildRequest req = Request();
  const CompilerSetup gxx = CompilerAt(Tool::kCxx, cc.path());
  EXPECT_EQ(LiteExtExcluded(req, gxx, kSource, lite), "");
  EXPECT_EQ(LiteExtExcluded(req, gxx, "#include <ATen/cuda/CUDAContext.h>\n  #  include <c10/util/Half.h>\n", lite), "");
  EXPECT_EQ(LiteExtExcluded(req, gxx, "#include <vector>\n#include <torch/torch.h>\n", lite), "");
  EXPECT_EQ(LiteExtExcluded(req, gxx, "#include <vector>\n#include <torch/script.h>\n", lite),
            "the lite headers have no <torch/script.h>");
  EXPECT_EQ(LiteExtExcluded(req, gxx, "#include <pybind11/stl.h>\n", lite), "the lite headers have no <pybind11/stl.h>");
  EXPECT_EQ(LiteExtExcluded(req, gxx, "#include <Python.h>\n", lite), "the lite headers have no <Python.h>");
  EXPECT_EQ(LiteExtExcluded(req, gxx, "#include \"kernels.h\"\n", lite), "the source includes local files");
  EXPECT_EQ(LiteExtExcluded(req, gxx, "#include <" + std::string(1 << 20, 'a') + ">\n", lite),
            "the source has a line longer than 4096 characters");
  BuildRequest native = req;
  native.kind = SourceKind::kNative;
  EXPECT_EQ(LiteExtExcluded(native, gxx, kSource, lite), "native sources have no binding");
  BuildRequest only = req;
  only.compile_only = true;
  EXPECT_EQ(LiteExtExcluded(only, gxx, kSource, lite), "");  // compiled against the headers alone
  BuildRequest hip = req;
  hip.language = Language::kHip;
  hip.backend = Backend::kCuda;
  EXPECT_TRUE(Has(LiteExtExcluded(hip, CompilerAt(Tool::kNvcc, cc.path()), kSource, lite), "C++ and CUDA"));

  Write("#include <torch/script.h>\n" + std::string(kSource));
  auto r = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(r.ok() && r->ok);
  EXPECT_FALSE(r->lite_ext);
  EXPECT_EQ(r->lite_ext_note, "the lite headers have no <torch/script.h>");
  EXPECT_EQ(cc.Calls(), 1);  // the full build only: no lite object was made
}

TEST_F(LiteExtTest, PreparingMakesTheObjectTheFirstBuildThenShares) {
  FakeCompiler cc(FakeCompiler::kWritesOutput);
  UseCompiler(cc);
  BuildRequest like = Request();
  like.source_path = work_->Join("no-such-source.cpp");  // not read
  ASSERT_TRUE(PrepareExtensionBuilds(like, kTimeout).ok());
  EXPECT_EQ(cc.Calls(), 1);  // the lite object only
  ASSERT_TRUE(PrepareExtensionBuilds(like, kTimeout).ok());
  EXPECT_EQ(cc.Calls(), 1);  // made once
  auto built = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(built.ok() && built->ok) << (built.ok() ? built->diagnostics : built.error());
  EXPECT_TRUE(built->lite_ext) << built->lite_ext_note;
  EXPECT_EQ(cc.Calls(), 2);  // the candidate alone

  BuildRequest native = like;
  native.kind = SourceKind::kNative;
  EXPECT_FALSE(PrepareExtensionBuilds(native, kTimeout).ok());
  setenv("KVAULT_LITE_EXT", "0", 1);
  auto off = PrepareExtensionBuilds(like, kTimeout);
  ASSERT_FALSE(off.ok());
  EXPECT_TRUE(Has(off.error(), "turned off")) << off.error();
  EXPECT_EQ(cc.Calls(), 2);
}

TEST_F(LiteExtTest, AFailedObjectIsKeptAndTheFullBuildRuns) {
  FakeCompiler cc(FakeCompiler::kWritesOutput, "fakecc (KernelVault test) 9.9.9", "lite.cc");
  UseCompiler(cc);
  auto first = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(first.ok() && first->ok) << (first.ok() ? first->diagnostics : first.error());
  EXPECT_FALSE(first->lite_ext);
  EXPECT_TRUE(Has(first->lite_ext_note, "preparing the lite extension build failed")) << first->lite_ext_note;
  Write(std::string(kSource) + "// another\n");
  auto second = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(second.ok() && second->ok);
  EXPECT_TRUE(Has(second->lite_ext_note, "failed before")) << second->lite_ext_note;
}

TEST_F(LiteExtTest, AnObjectTheCompilerDidNotWriteIsAFailureKeptAsSuch) {
  FakeCompiler cc(FakeCompiler::kWritesNothing);
  UseCompiler(cc);
  const CompilerSetup gxx = CompilerAt(Tool::kCxx, cc.path());
  const std::string cache = work_->Join("cache");
  auto first = EnsureLiteExt(Request(), gxx, "fakecc 9.9.9", DefaultIncludeLiteDir(), cache, kTimeout);
  ASSERT_FALSE(first.ok());
  EXPECT_TRUE(Has(first.error(), "exited 0 without writing kvault_lite.o")) << first.error();
  auto second = EnsureLiteExt(Request(), gxx, "fakecc 9.9.9", DefaultIncludeLiteDir(), cache, kTimeout);
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(Has(second.error(), "failed before")) << second.error();
  EXPECT_TRUE(ReadFile(second.error().substr(second.error().find("see ") + 4)).ok())  // the record exists
      << second.error();
  EXPECT_EQ(cc.Calls(), 1);  // not retried
}

TEST_F(LiteExtTest, NvccLinksTheObjectThatGxxCompiledForCuda) {
  FakeCompiler cc(FakeCompiler::kWritesOutput);
  FakeCompiler nvcc(FakeCompiler::kWritesOutput, "Cuda compilation tools, release 13.0, V13.0.88");
  UseCompiler(cc);
  setenv("KVAULT_NVCC", nvcc.path().c_str(), 1);
  const std::string cu = work_->Join("relu.cu");
  ASSERT_TRUE(WriteFileAtomic(cu, std::string("#include <ATen/cuda/CUDAContext.h>\n") + kSource).ok());
  BuildRequest req = Request();
  req.source_path = cu;
  req.language = Language::kCuda;
  req.backend = Backend::kCuda;
  req.arch = "sm_90";
  auto r = BuildExtension(req, kTimeout);
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_TRUE(r->ok) << r->diagnostics;
  EXPECT_TRUE(r->lite_ext) << r->lite_ext_note;
  EXPECT_EQ(cc.Calls(), 1);    // the object, by g++
  EXPECT_EQ(nvcc.Calls(), 1);  // the candidate
  EXPECT_TRUE(Has(cc.Log(), "-DKVAULT_LITE_CUDA=1")) << cc.Log();
  EXPECT_TRUE(Has(r->command, "-I " + DefaultIncludeLiteDir() + " ")) << r->command;
  EXPECT_TRUE(Has(r->command, "/kvault_lite.o -shared")) << r->command;
  EXPECT_EQ(r->toolchain, "nvcc 13.0 (lite extension build)");
}

}  // namespace
}  // namespace kvault
