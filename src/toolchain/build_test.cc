// BuildExtension with fake compiler scripts: cache, flags, failures, timeouts.
#include "toolchain/build.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "toolchain/build_key.h"
#include "toolchain/fake_compiler_for_test.h"
#include "util/files.h"
#include "util/strings.h"

namespace kvault {
namespace {

using std::chrono::milliseconds;
using testing::FakeCompiler;

constexpr milliseconds kTimeout{20'000};

class BuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("KVAULT_LITE_EXT", "0", 1);  // the lite build: lite_ext_test.cc
    work_ = std::make_unique<TempDir>(TempDir::Create("", "kvault-buildtest").value());
    source_ = work_->Join("relu.cpp");
    WriteSource("torch::Tensor forward(torch::Tensor x) { return x.relu(); }\n");
  }
  void TearDown() override {
    unsetenv("KVAULT_LITE_EXT");
    unsetenv("KVAULT_PCH");
    unsetenv("KVAULT_CXX");
    unsetenv("KVAULT_NVCC");
    unsetenv("KVAULT_HIPCC");
  }
  void WriteSource(const std::string& text) { ASSERT_TRUE(WriteFileAtomic(source_, text).ok()); }

  BuildRequest Request() const {
    BuildRequest r;
    r.source_path = source_;
    r.language = Language::kCpp;
    r.backend = Backend::kCpu;
    r.torch.include_paths = {work_->Join("torch-include")};
    r.torch.library_paths = {work_->Join("torch-lib")};
    r.torch.python_include = "/py";
    r.torch.torch_version = "1.13.0";
    r.cache_dir = work_->Join("cache");
    return r;
  }

  BuildRequest Request(Language language, Backend backend, const std::string& arch) const {
    BuildRequest r = Request();
    r.language = language;
    r.backend = backend;
    r.arch = arch;
    return r;
  }

  std::unique_ptr<TempDir> work_;
  std::string source_;
};

TEST_F(BuildTest, BuildsThenServesFromTheCache) {
  FakeCompiler cc(FakeCompiler::kWritesOutput);
  setenv("KVAULT_CXX", cc.path().c_str(), 1);
  auto first = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(first.ok()) << first.error();
  EXPECT_TRUE(first->ok) << first->diagnostics;
  EXPECT_FALSE(first->cache_hit);
  EXPECT_EQ(first->key.size(), 64u);
  EXPECT_EQ(first->module_name, "kv_" + first->key.substr(0, 16));
  EXPECT_EQ(first->artifact, work_->Join("cache") + "/build/" + first->key.substr(0, 2) + "/" + first->key +
                                 "/" + first->module_name + ".so");
  EXPECT_EQ(*ReadFile(first->artifact), "object built by fakecc\n");
  EXPECT_NE(first->command.find("-DTORCH_EXTENSION_NAME=" + first->module_name), std::string::npos);
  EXPECT_NE(first->command.find(source_), std::string::npos);
  EXPECT_NE(first->diagnostics.find("fake warning"), std::string::npos);
  EXPECT_EQ(first->toolchain, "g++ 9.9.9");
  EXPECT_EQ(cc.Calls(), 1);

  auto second = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(second.ok()) << second.error();
  EXPECT_TRUE(second->ok);
  EXPECT_TRUE(second->cache_hit);
  EXPECT_EQ(second->artifact, first->artifact);
  EXPECT_EQ(second->module_name, first->module_name);
  EXPECT_NE(second->diagnostics.find("fake warning"), std::string::npos);  // kept with the entry
  EXPECT_EQ(cc.Calls(), 1);
}

TEST_F(BuildTest, SameSourceElsewhereHitsTheCache) {
  FakeCompiler cc(FakeCompiler::kWritesOutput);
  setenv("KVAULT_CXX", cc.path().c_str(), 1);
  auto first = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(first.ok() && first->ok);
  BuildRequest moved = Request();
  moved.source_path = work_->Join("copy.cpp");
  ASSERT_TRUE(WriteFileAtomic(moved.source_path, *ReadFile(source_)).ok());
  auto second = BuildExtension(moved, kTimeout);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->cache_hit);
  EXPECT_EQ(cc.Calls(), 1);
}

TEST_F(BuildTest, EveryKeyInputChangesTheKey) {
  FakeCompiler cc(FakeCompiler::kWritesOutput);
  setenv("KVAULT_CXX", cc.path().c_str(), 1);
  auto base = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(base.ok() && base->ok);
  std::vector<std::string> keys = {base->key};
  auto expect_new_key = [&](const BuildRequest& r, const char* what) {
    auto b = BuildExtension(r, kTimeout);
    ASSERT_TRUE(b.ok()) << what << ": " << b.error();
    EXPECT_FALSE(b->cache_hit) << what;
    for (const std::string& k : keys) EXPECT_NE(b->key, k) << what;
    EXPECT_NE(b->module_name, base->module_name) << what;
    keys.push_back(b->key);
  };
  BuildRequest r = Request();
  r.extra_flags = {"-DVARIANT=2"};
  expect_new_key(r, "extra flag");
  r = Request();
  r.torch.torch_version = "1.13.1";
  expect_new_key(r, "torch version");
  r = Request();
  r.torch.cxx11_abi = false;
  expect_new_key(r, "abi");
  r = Request();
  r.compile_only = true;
  expect_new_key(r, "compile only");
  WriteSource("torch::Tensor forward(torch::Tensor x) { return x.relu() * 1; }\n");
  expect_new_key(Request(), "source");
  FakeCompiler other(FakeCompiler::kWritesOutput, "fakecc (KernelVault test) 10.0.0");
  setenv("KVAULT_CXX", other.path().c_str(), 1);
  expect_new_key(Request(), "compiler version");
}

// Headers the source includes, the torch headers and the compiler binary itself.
TEST_F(BuildTest, IncludedHeadersAndToolchainFilesChangeTheKey) {
  FakeCompiler cc(FakeCompiler::kWritesOutput);
  setenv("KVAULT_CXX", cc.path().c_str(), 1);
  ASSERT_TRUE(EnsureDir(work_->Join("inc")).ok());
  ASSERT_TRUE(EnsureDir(work_->Join("torch-include")).ok());
  ASSERT_TRUE(WriteFileAtomic(work_->Join("inc/helper.h"), "#include \"../deep.h\"\nint helper();\n").ok());
  ASSERT_TRUE(WriteFileAtomic(work_->Join("deep.h"), "#define DEPTH 1\n").ok());
  WriteSource("#include \"inc/helper.h\"\ntorch::Tensor forward(torch::Tensor x) { return x; }\n");
  auto base = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(base.ok() && base->ok) << (base.ok() ? base->diagnostics : base.error());
  auto key_now = [&]() {
    auto b = BuildExtension(Request(), kTimeout);
    EXPECT_TRUE(b.ok() && b->ok);
    return b.ok() ? b->key : std::string();
  };
  EXPECT_EQ(key_now(), base->key);
  ASSERT_TRUE(WriteFileAtomic(work_->Join("deep.h"), "#define DEPTH 2\n").ok());  // included by the header
  std::string after_deep = key_now();
  EXPECT_NE(after_deep, base->key);
  ASSERT_TRUE(WriteFileAtomic(work_->Join("torch-include/Added.h"), "// new\n").ok());
  std::string after_torch = key_now();
  EXPECT_NE(after_torch, after_deep);
  struct timespec times[2] = {{1000, 0}, {1000, 0}};  // the compiler rebuilt, same --version
  ASSERT_EQ(::utimensat(AT_FDCWD, cc.path().c_str(), times, 0), 0);
  EXPECT_NE(key_now(), after_torch);
}

// The names a source includes are the candidate's, and the engine reads them itself
// for the key, outside the sandbox: `#include "/dev/zero"` read until the engine
// aborted, a FIFO held it for good. Only regular files inside the source's folder are
// read; anything else keys on its name alone.
TEST_F(BuildTest, IncludesOutsideTheSourcesFolderOrNotRegularAreNotRead) {
  FakeCompiler cc(FakeCompiler::kWritesOutput);
  setenv("KVAULT_CXX", cc.path().c_str(), 1);
  ASSERT_TRUE(EnsureDir(work_->Join("src")).ok());
  ASSERT_EQ(::mkfifo(work_->Join("src/pipe.h").c_str(), 0600), 0);
  ASSERT_TRUE(WriteFileAtomic(work_->Join("outside.h"), "#define SIDE 1\n").ok());
  BuildRequest r = Request();
  r.source_path = work_->Join("src/relu.cpp");
  ASSERT_TRUE(WriteFileAtomic(r.source_path, "#include \"/dev/zero\"\n#include \"pipe.h\"\n"
                                             "#include \"../outside.h\"\n#include \"../src/../../etc/passwd\"\n"
                                             "torch::Tensor forward(torch::Tensor x) { return x; }\n").ok());
  auto first = BuildExtension(r, kTimeout);
  ASSERT_TRUE(first.ok() && first->ok) << (first.ok() ? first->diagnostics : first.error());
  ASSERT_TRUE(WriteFileAtomic(work_->Join("outside.h"), "#define SIDE 2\n").ok());
  auto second = BuildExtension(r, kTimeout);
  ASSERT_TRUE(second.ok() && second->ok);
  EXPECT_EQ(second->key, first->key);  // outside the folder: its bytes are not in the key
}

TEST_F(BuildTest, ADamagedEntryIsRebuiltNotLoaded) {
  FakeCompiler cc(FakeCompiler::kWritesOutput);
  setenv("KVAULT_CXX", cc.path().c_str(), 1);
  auto first = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(first.ok() && first->ok);
  std::filesystem::resize_file(first->artifact, 5);  // truncated on disk
  auto second = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(second.ok() && second->ok);
  EXPECT_FALSE(second->cache_hit);
  EXPECT_EQ(cc.Calls(), 2);
  EXPECT_EQ(*ReadFile(second->artifact), "object built by fakecc\n");
}

TEST_F(BuildTest, CompileOnlyStoresTheObjectFile) {
  FakeCompiler cc(FakeCompiler::kWritesOutput);
  setenv("KVAULT_CXX", cc.path().c_str(), 1);
  BuildRequest r = Request();
  r.compile_only = true;
  auto b = BuildExtension(r, kTimeout);
  ASSERT_TRUE(b.ok()) << b.error();
  EXPECT_TRUE(b->ok);
  EXPECT_TRUE(EndsWith(b->artifact, "/" + b->module_name + ".o")) << b->artifact;
  EXPECT_NE(b->command.find(" -c "), std::string::npos);
  EXPECT_EQ(b->command.find("-shared"), std::string::npos);
}

TEST_F(BuildTest, ARejectedSourceIsAResultNotAnError) {
  FakeCompiler cc(FakeCompiler::kRejects);
  setenv("KVAULT_CXX", cc.path().c_str(), 1);
  auto b = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(b.ok()) << b.error();
  EXPECT_FALSE(b->ok);
  EXPECT_FALSE(b->timed_out);
  EXPECT_TRUE(b->artifact.empty());
  EXPECT_NE(b->diagnostics.find("error: expected ';'"), std::string::npos);
  // Failures are not cached: the next attempt compiles again.
  auto again = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->cache_hit);
  EXPECT_EQ(cc.Calls(), 2);
}

// A CPU-only PyTorch lacks headers a CUDA source includes: the machine's fault, an
// error (infra), while the same failure under a CUDA build of PyTorch, and any other
// rejection, stays the source's.
TEST_F(BuildTest, ACpuOnlyTorchMissingCudaHeadersIsAnInfrastructureError) {
  FakeCompiler nvcc(FakeCompiler::kNoTorchCuda, "Cuda compilation tools, release 13.0, V13.0.48");
  setenv("KVAULT_NVCC", nvcc.path().c_str(), 1);
  BuildRequest r = Request(Language::kCuda, Backend::kCuda, "sm_90");
  auto cpu_torch = BuildExtension(r, kTimeout);
  ASSERT_FALSE(cpu_torch.ok());
  EXPECT_NE(cpu_torch.error().find("is a build without CUDA (no c10/cuda/impl/cuda_cmake_macros.h)"),
            std::string::npos) << cpu_torch.error();
  const std::string macros = work_->Join("torch-include/c10/cuda/impl/cuda_cmake_macros.h");
  std::filesystem::create_directories(std::filesystem::path(macros).parent_path());
  ASSERT_TRUE(WriteFileAtomic(macros, "\n").ok());
  auto cuda_torch = BuildExtension(r, kTimeout);
  ASSERT_TRUE(cuda_torch.ok()) << cuda_torch.error();
  EXPECT_FALSE(cuda_torch->ok);
  std::filesystem::remove(macros);
  FakeCompiler rejects(FakeCompiler::kRejects, "Cuda compilation tools, release 13.0, V13.0.48");
  setenv("KVAULT_NVCC", rejects.path().c_str(), 1);
  auto genuine = BuildExtension(r, kTimeout);
  ASSERT_TRUE(genuine.ok()) << genuine.error();
  EXPECT_FALSE(genuine->ok);
}

// --arch names a target the compiler does not know: the request's fault (infra), not
// the source's; a source's own #error with the same words stays a compile error.
TEST_F(BuildTest, ATargetTheCompilerDoesNotKnowIsAnInfrastructureError) {
  FakeCompiler hipcc(FakeCompiler::kUnknownTarget, "HIP version: 5.2.21153-0");
  setenv("KVAULT_HIPCC", hipcc.path().c_str(), 1);
  BuildRequest r = Request(Language::kHip, Backend::kHip, "gfx942");
  r.compile_only = true;
  auto unknown = BuildExtension(r, kTimeout);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().find("hipcc cannot build for gfx942 (clang: error: invalid target ID 'gfx942'"),
            std::string::npos) << unknown.error();
  r.arch = "gfx90a";  // the source prints the words for this target; the driver says nothing
  auto source_error = BuildExtension(r, kTimeout);
  ASSERT_TRUE(source_error.ok()) << source_error.error();
  EXPECT_FALSE(source_error->ok);
}

TEST_F(BuildTest, DiagnosticsAreBounded) {
  FakeCompiler cc(FakeCompiler::kFloods);
  setenv("KVAULT_CXX", cc.path().c_str(), 1);
  auto b = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(b.ok()) << b.error();
  EXPECT_FALSE(b->ok);
  EXPECT_LE(b->diagnostics.size(), 16u * 1024 + 100);
  EXPECT_NE(b->diagnostics.find("bytes omitted"), std::string::npos);
}

TEST_F(BuildTest, ACompilerPastTheTimeoutIsKilled) {
  FakeCompiler cc(FakeCompiler::kHangs);
  setenv("KVAULT_CXX", cc.path().c_str(), 1);
  auto start = std::chrono::steady_clock::now();
  auto b = BuildExtension(Request(), milliseconds(500));
  ASSERT_TRUE(b.ok()) << b.error();
  EXPECT_FALSE(b->ok);
  EXPECT_TRUE(b->timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST_F(BuildTest, AMissingCompilerIsAnInfrastructureError) {
  setenv("KVAULT_CXX", work_->Join("no-such-compiler").c_str(), 1);
  auto b = BuildExtension(Request(), kTimeout);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().find("KVAULT_CXX"), std::string::npos) << b.error();
}

TEST_F(BuildTest, AMissingSourceIsAnInfrastructureError) {
  FakeCompiler cc(FakeCompiler::kWritesOutput);
  setenv("KVAULT_CXX", cc.path().c_str(), 1);
  BuildRequest r = Request();
  r.source_path = work_->Join("missing.cpp");
  EXPECT_FALSE(BuildExtension(r, kTimeout).ok());
  EXPECT_EQ(cc.Calls(), 0);
}

TEST_F(BuildTest, ACompilerThatWritesNothingIsAnInfrastructureError) {
  FakeCompiler cc(FakeCompiler::kWritesNothing);
  setenv("KVAULT_CXX", cc.path().c_str(), 1);
  EXPECT_FALSE(BuildExtension(Request(), kTimeout).ok());
}

TEST_F(BuildTest, UnsupportedPairsAreErrors) {
  BuildRequest r = Request();
  r.language = Language::kCuda;
  EXPECT_FALSE(BuildExtension(r, kTimeout).ok());
}

TEST_F(BuildTest, ConcurrentBuildsOfOneSourceCompileOnce) {
  FakeCompiler cc(FakeCompiler::kSlowWrites);
  setenv("KVAULT_CXX", cc.path().c_str(), 1);
  Result<BuildResult> a = Error{"unset"}, b = Error{"unset"};
  std::thread ta([&] { a = BuildExtension(Request(), kTimeout); });
  std::thread tb([&] { b = BuildExtension(Request(), kTimeout); });
  ta.join();
  tb.join();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(a->ok && b->ok);
  EXPECT_EQ(a->artifact, b->artifact);
  EXPECT_NE(a->cache_hit, b->cache_hit);
  EXPECT_EQ(cc.Calls(), 1);
}

constexpr char kTorchSource[] =
    "#include <cmath>\n#include <torch/extension.h>\n"
    "torch::Tensor forward(torch::Tensor x) { return x.relu(); }\n";

// The header every g++ command forced in, "" if none.
std::string ForcedInclude(const std::string& command) {
  size_t at = command.find(" -include ");
  if (at == std::string::npos) return "";
  at += 10;
  return command.substr(at, command.find(' ', at) - at);
}

TEST_F(BuildTest, TorchSourcesShareOnePrecompiledHeader) {
  FakeCompiler cc(FakeCompiler::kWritesOutput);
  setenv("KVAULT_CXX", cc.path().c_str(), 1);
  WriteSource(kTorchSource);
  auto first = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(first.ok()) << first.error();
  EXPECT_TRUE(first->ok);
  EXPECT_TRUE(first->pch) << first->pch_note;
  EXPECT_EQ(first->pch_note, "");
  EXPECT_EQ(cc.Calls(), 2);  // the header, then the candidate
  std::string header = ForcedInclude(first->command);
  EXPECT_TRUE(StartsWith(header, work_->Join("cache") + "/pch/")) << first->command;
  EXPECT_TRUE(EndsWith(header, "/kvault_torch_pch.h")) << header;
  EXPECT_TRUE(FileExists(header + ".gch"));
  EXPECT_NE(first->command.find("-Winvalid-pch"), std::string::npos);
  auto meta = Json::parse(*ReadFile(work_->Join("cache") + "/build/" + first->key.substr(0, 2) + "/" + first->key +
                                    "/build.json"));
  EXPECT_EQ(meta["pch"], true);

  WriteSource(std::string(kTorchSource) + "// another candidate\n");
  auto second = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(second.ok()) << second.error();
  EXPECT_TRUE(second->ok && second->pch);
  EXPECT_NE(second->key, first->key);
  EXPECT_EQ(ForcedInclude(second->command), header);
  EXPECT_EQ(cc.Calls(), 3);  // the candidate only

  WriteSource(kTorchSource);
  auto hit = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(hit.ok());
  EXPECT_TRUE(hit->cache_hit);
  EXPECT_TRUE(hit->pch);  // as stored
  EXPECT_EQ(cc.Calls(), 3);
}

TEST_F(BuildTest, ThePchDoesNotChangeTheKey) {
  FakeCompiler cc(FakeCompiler::kWritesOutput);
  setenv("KVAULT_CXX", cc.path().c_str(), 1);
  WriteSource(kTorchSource);
  setenv("KVAULT_PCH", "0", 1);
  BuildRequest plain_req = Request();
  plain_req.cache_dir = work_->Join("plain-cache");
  auto plain = BuildExtension(plain_req, kTimeout);
  unsetenv("KVAULT_PCH");
  auto pch = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(plain.ok() && pch.ok());
  EXPECT_FALSE(plain->pch);
  EXPECT_NE(plain->pch_note.find("KVAULT_PCH=0"), std::string::npos) << plain->pch_note;
  EXPECT_EQ(ForcedInclude(plain->command), "");
  EXPECT_TRUE(pch->pch);
  EXPECT_EQ(plain->key, pch->key);
  EXPECT_EQ(plain->module_name, pch->module_name);
}

TEST_F(BuildTest, AFailedPchBuildFallsBackToThePlainCompile) {
  // The script refuses header compiles (exit 1, not logged as a call).
  FakeCompiler cc(FakeCompiler::kWritesOutput, "fakecc (KernelVault test) 9.9.9", "c++-header");
  setenv("KVAULT_CXX", cc.path().c_str(), 1);
  WriteSource(kTorchSource);
  auto b = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(b.ok()) << b.error();
  EXPECT_TRUE(b->ok);
  EXPECT_FALSE(b->pch);
  EXPECT_NE(b->pch_note.find("failed"), std::string::npos) << b->pch_note;
  EXPECT_EQ(ForcedInclude(b->command), "");
  EXPECT_EQ(cc.Calls(), 1);
  // The next candidate does not try again.
  WriteSource(std::string(kTorchSource) + "// another candidate\n");
  auto next = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(next.ok());
  EXPECT_TRUE(next->ok);
  EXPECT_FALSE(next->pch);
  EXPECT_NE(next->pch_note.find("failed.json"), std::string::npos) << next->pch_note;
}

TEST_F(BuildTest, APchThatGxxRejectsIsReported) {
  FakeCompiler cc(FakeCompiler::kRejectsPch);
  setenv("KVAULT_CXX", cc.path().c_str(), 1);
  WriteSource(kTorchSource);
  auto b = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(b.ok()) << b.error();
  EXPECT_TRUE(b->ok);
  EXPECT_FALSE(b->pch);
  EXPECT_NE(b->pch_note.find("rejected"), std::string::npos) << b->pch_note;
  EXPECT_NE(b->diagnostics.find("[-Winvalid-pch]"), std::string::npos);
}

TEST_F(BuildTest, SourcesThatDoNotStartWithTorchSkipThePch) {
  FakeCompiler cc(FakeCompiler::kWritesOutput);
  setenv("KVAULT_CXX", cc.path().c_str(), 1);
  for (const char* src : {"int forward();\n", "#define NDEBUG\n#include <torch/extension.h>\n"}) {
    WriteSource(src);
    auto b = BuildExtension(Request(), kTimeout);
    ASSERT_TRUE(b.ok()) << b.error();
    EXPECT_TRUE(b->ok);
    EXPECT_FALSE(b->pch);
    EXPECT_NE(b->pch_note.find("does not start with"), std::string::npos) << b->pch_note;
    EXPECT_EQ(ForcedInclude(b->command), "");
  }
  EXPECT_EQ(cc.Calls(), 2);
  EXPECT_FALSE(FileExists(work_->Join("cache") + "/pch"));
}

TEST_F(BuildTest, ConcurrentCandidatesBuildThePchOnce) {
  FakeCompiler cc(FakeCompiler::kSlowWrites);
  setenv("KVAULT_CXX", cc.path().c_str(), 1);
  BuildRequest ra = Request(), rb = Request();
  ra.source_path = work_->Join("a.cpp");
  rb.source_path = work_->Join("b.cpp");
  ASSERT_TRUE(WriteFileAtomic(ra.source_path, std::string(kTorchSource) + "// a\n").ok());
  ASSERT_TRUE(WriteFileAtomic(rb.source_path, std::string(kTorchSource) + "// b\n").ok());
  Result<BuildResult> a = Error{"unset"}, b = Error{"unset"};
  std::thread ta([&] { a = BuildExtension(ra, kTimeout); });
  std::thread tb([&] { b = BuildExtension(rb, kTimeout); });
  ta.join();
  tb.join();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(a->ok && a->pch && b->ok && b->pch);
  EXPECT_EQ(ForcedInclude(a->command), ForcedInclude(b->command));
  EXPECT_EQ(cc.Calls(), 3);  // one header, two candidates
}

TEST_F(BuildTest, OtherCompilersGetNoPch) {
  FakeCompiler nvcc(FakeCompiler::kWritesOutput, "Cuda compilation tools, release 13.0, V13.0.88");
  setenv("KVAULT_NVCC", nvcc.path().c_str(), 1);
  WriteSource(kTorchSource);
  BuildRequest r = Request();
  r.language = Language::kCuda;
  r.backend = Backend::kCuda;
  auto b = BuildExtension(r, kTimeout);
  ASSERT_TRUE(b.ok()) << b.error();
  EXPECT_FALSE(b->pch);
  EXPECT_EQ(ForcedInclude(b->command), "");
  EXPECT_EQ(nvcc.Calls(), 1);
}

TEST_F(BuildTest, HipOnNvidiaKeysOnThePortabilityHeaders) {
  FakeCompiler nvcc(FakeCompiler::kWritesOutput, "Cuda compilation tools, release 13.0, V13.0.88");
  setenv("KVAULT_NVCC", nvcc.path().c_str(), 1);
  BuildRequest r = Request();
  r.language = Language::kHip;
  r.backend = Backend::kCuda;
  r.arch = "sm_90";
  for (const char* name : {"hip_a", "hip_b"}) {
    ASSERT_TRUE(EnsureDir(work_->Join(name) + "/hip").ok());
    ASSERT_TRUE(WriteFileAtomic(work_->Join(name) + "/hip/hip_runtime.h", std::string("// ") + name).ok());
  }
  r.include_hip_dir = work_->Join("hip_a");
  auto a = BuildExtension(r, kTimeout);
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_TRUE(a->ok);
  EXPECT_EQ(a->toolchain, "nvcc 13.0 (hip-on-nvidia)");
  EXPECT_NE(a->command.find("-I " + work_->Join("hip_a")), std::string::npos) << a->command;
  EXPECT_NE(a->command.find("-x cu"), std::string::npos);
  r.include_hip_dir = work_->Join("hip_b");
  auto b = BuildExtension(r, kTimeout);
  ASSERT_TRUE(b.ok()) << b.error();
  EXPECT_NE(a->key, b->key);
  r.include_hip_dir = work_->Join("no_such_dir");
  EXPECT_FALSE(BuildExtension(r, kTimeout).ok());
}

TEST_F(BuildTest, HipccAgainstTorchWithoutHipNeedsCompileOnly) {
  FakeCompiler hipcc(FakeCompiler::kWritesOutput, "HIP version: 5.2.21153-0");
  setenv("KVAULT_HIPCC", hipcc.path().c_str(), 1);
  BuildRequest r = Request();
  r.language = Language::kHip;
  r.backend = Backend::kHip;
  r.arch = "gfx90a";
  ASSERT_TRUE(EnsureDir(work_->Join("include_hip/compile_only")).ok());
  ASSERT_TRUE(WriteFileAtomic(work_->Join("include_hip/compile_only/x.h"), "//").ok());
  r.include_hip_dir = work_->Join("include_hip");
  EXPECT_FALSE(BuildExtension(r, kTimeout).ok());
  r.compile_only = true;
  auto b = BuildExtension(r, kTimeout);
  ASSERT_TRUE(b.ok()) << b.error();
  EXPECT_TRUE(b->ok);
  EXPECT_EQ(b->toolchain, "hipcc 5.2.21153-0 (compile-only shims)");
  EXPECT_NE(b->command.find("--offload-arch=gfx90a"), std::string::npos);
}

TEST_F(BuildTest, NativeSourcesKeyOnTheirHeaderAndSkipThePch) {
  FakeCompiler cc(FakeCompiler::kWritesOutput);
  setenv("KVAULT_CXX", cc.path().c_str(), 1);
  WriteSource(kTorchSource);  // would take the PCH path were it an extension
  auto extension = BuildExtension(Request(), kTimeout);
  ASSERT_TRUE(extension.ok()) << extension.error();
  for (const char* name : {"native_a", "native_b"}) {
    ASSERT_TRUE(EnsureDir(work_->Join(name) + "/kvault").ok());
    ASSERT_TRUE(WriteFileAtomic(work_->Join(name) + "/kvault/native.h", std::string("// ") + name).ok());
  }
  BuildRequest r = Request();
  r.kind = SourceKind::kNative;
  r.native_include_dir = work_->Join("native_a");
  auto a = BuildExtension(r, kTimeout);
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_TRUE(a->ok);
  EXPECT_FALSE(a->pch);
  EXPECT_EQ(a->toolchain, "g++ 9.9.9 (native)");
  EXPECT_NE(a->key, extension->key);
  EXPECT_EQ(a->command.find("TORCH_EXTENSION_NAME"), std::string::npos) << a->command;
  EXPECT_NE(a->command.find("-I " + work_->Join("native_a")), std::string::npos) << a->command;
  EXPECT_TRUE(BuildExtension(r, kTimeout)->cache_hit);
  r.native_include_dir = work_->Join("native_b");
  auto b = BuildExtension(r, kTimeout);
  ASSERT_TRUE(b.ok()) << b.error();
  EXPECT_FALSE(b->cache_hit);
  EXPECT_NE(a->key, b->key);
  r.native_include_dir = work_->Join("no_such_dir");
  EXPECT_FALSE(BuildExtension(r, kTimeout).ok());
}

}  // namespace
}  // namespace kvault
