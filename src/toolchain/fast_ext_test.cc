// The fast extension build (toolchain/fast_ext.h) through BuildExtension, with fake
// compiler scripts: its entry, its own key, and every fallback to the full build.
#include "toolchain/fast_ext.h"

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
constexpr char kSource[] =
    "#include <torch/extension.h>\n"
    "torch::Tensor forward(torch::Tensor x) { return x.relu(); }\n"
    "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"forward\", &forward); }\n";

class FastExtTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("KVAULT_LITE_EXT", "0", 1);  // the lite build: lite_ext_test.cc
    work_ = std::make_unique<TempDir>(TempDir::Create("", "kvault-fastexttest").value());
    source_ = work_->Join("relu.cpp");
    Write(kSource);
    setenv("KVAULT_FAST_EXT", "1", 1);
  }
  void TearDown() override {
    unsetenv("KVAULT_LITE_EXT");
    unsetenv("KVAULT_FAST_EXT");
    unsetenv("KVAULT_CXX");
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

TEST_F(FastExtTest, BuildsWithTheLightHeadersAndLinksTheBinding) {
  FakeCompiler cc(FakeCompiler::kWritesOutput);
  UseCompiler(cc);
  auto first = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(first.ok()) << first.error();
  ASSERT_TRUE(first->ok) << first->diagnostics;
  EXPECT_TRUE(first->fast_ext) << first->fast_ext_note;
  EXPECT_EQ(first->fast_ext_note, "");
  EXPECT_EQ(cc.Calls(), 3);  // the light header, the binding, then the candidate
  EXPECT_TRUE(Has(first->command, "-I " + DefaultIncludeExtDir() + " ")) << first->command;
  EXPECT_TRUE(Has(first->command, "/kvault_ext_pch.h " + source_ + " ")) << first->command;
  EXPECT_TRUE(Has(first->command, source_ + " " + work_->Join("cache") + "/pch/")) << first->command;
  EXPECT_TRUE(Has(first->command, "/kvault_ext_binding.o -shared")) << first->command;
  EXPECT_TRUE(first->pch);
  EXPECT_EQ(first->toolchain, "g++ 9.9.9 (fast extension build)");
  auto meta = Json::parse(*ReadFile(work_->Join("cache") + "/build/" + first->key.substr(0, 2) + "/" +
                                    first->key + "/build.json"));
  EXPECT_EQ(meta["fast_ext"], true);

  Write(std::string(kSource) + "// another candidate\n");
  auto second = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(second.ok() && second->ok && second->fast_ext);
  EXPECT_EQ(cc.Calls(), 4);  // the entry is shared

  Write(kSource);
  auto hit = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(hit.ok());
  EXPECT_TRUE(hit->cache_hit && hit->fast_ext);
  EXPECT_EQ(hit->key, first->key);
  EXPECT_EQ(cc.Calls(), 4);
}

TEST_F(FastExtTest, ItsArtifactHasItsOwnKey) {
  FakeCompiler cc(FakeCompiler::kWritesOutput);
  UseCompiler(cc);
  auto fast = BuildExtension(Request(), kTimeout);
  unsetenv("KVAULT_FAST_EXT");
  auto full = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(fast.ok() && full.ok());
  EXPECT_TRUE(fast->fast_ext);
  EXPECT_FALSE(full->fast_ext);
  EXPECT_FALSE(full->cache_hit);
  EXPECT_NE(fast->key, full->key);
  EXPECT_NE(fast->module_name, full->module_name);
  EXPECT_FALSE(Has(full->command, "kvault_ext"));
}

TEST_F(FastExtTest, ASourceTheLightHeadersRejectIsBuiltWithTheFullOnes) {
  // Only the candidate's fast compile names the binding object right before -shared.
  FakeCompiler cc(FakeCompiler::kWritesOutput, "fakecc (KernelVault test) 9.9.9", "kvault_ext_binding.o?-shared");
  UseCompiler(cc);
  auto r = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_TRUE(r->ok) << r->diagnostics;
  EXPECT_FALSE(r->fast_ext);
  EXPECT_TRUE(Has(r->fast_ext_note, "the light headers did not compile it")) << r->fast_ext_note;
  EXPECT_FALSE(Has(r->command, "kvault_ext"));
  unsetenv("KVAULT_FAST_EXT");
  auto full = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(full.ok());
  EXPECT_TRUE(full->cache_hit);  // the same entry as a build without the fast path
  EXPECT_EQ(full->key, r->key);
}

TEST_F(FastExtTest, AFailedEntryIsRememberedAndTheBuildGoesOn) {
  FakeCompiler cc(FakeCompiler::kWritesOutput, "fakecc (KernelVault test) 9.9.9", "binding.cc");
  UseCompiler(cc);
  auto first = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(first.ok()) << first.error();
  ASSERT_TRUE(first->ok);
  EXPECT_FALSE(first->fast_ext);
  EXPECT_TRUE(Has(first->fast_ext_note, "preparing the fast extension build failed")) << first->fast_ext_note;
  int calls = cc.Calls();
  Write(std::string(kSource) + "// another candidate\n");
  auto second = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(second.ok() && second->ok);
  EXPECT_TRUE(Has(second->fast_ext_note, "failed before")) << second->fast_ext_note;
  EXPECT_EQ(cc.Calls(), calls + 1);  // the candidate only: the entry is not retried
}

TEST_F(FastExtTest, SaysWhyItDoesNotApply) {
  FakeCompiler cc(FakeCompiler::kWritesOutput);
  UseCompiler(cc);
  BuildRequest compile_only = Request();
  compile_only.compile_only = true;
  auto c = BuildExtension(compile_only, kTimeout);
  ASSERT_TRUE(c.ok() && c->ok);
  EXPECT_TRUE(Has(c->fast_ext_note, "compile-only")) << c->fast_ext_note;

  Write("#include \"helper.h\"\n" + std::string(kSource));
  auto local = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(local.ok() && local->ok);
  EXPECT_FALSE(local->fast_ext);
  EXPECT_TRUE(Has(local->fast_ext_note, "local files")) << local->fast_ext_note;

  unsetenv("KVAULT_FAST_EXT");
  Write(kSource);
  auto off = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(off.ok() && off->ok);
  EXPECT_FALSE(off->fast_ext);
  EXPECT_EQ(off->fast_ext_note, "");
}

}  // namespace
}  // namespace kvault
