#include "toolchain/flags.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

namespace kvault {
namespace {

using Argv = std::vector<std::string>;

TorchBuildInfo Torch() {
  TorchBuildInfo t;
  t.include_paths = {"/t/include", "/t/include/torch/csrc/api/include"};
  t.library_paths = {"/t/lib"};
  t.libraries = {"c10", "torch", "torch_cpu", "torch_python"};
  t.python_include = "/py/include";
  return t;
}

BuildRequest Request(Language l, Backend b, std::string arch = "") {
  BuildRequest r;
  r.language = l;
  r.backend = b;
  r.arch = std::move(arch);
  r.torch = Torch();
  return r;
}

CompilerSetup MakeSetup(Tool tool, bool torch_has_hip = false) {
  CompilerSetup setup;
  setup.tool = tool;
  setup.tool_path = "/bin/" + ToolName(tool);
  setup.include_hip_dir = "/src/include_hip";
  setup.torch_has_hip = torch_has_hip;
  return setup;
}

const CommandSlots kSlots{"/c/relu.src", "kv_0123456789abcdef", "/o/out"};

bool Has(const Argv& a, const std::string& s) { return std::find(a.begin(), a.end(), s) != a.end(); }
// Index of `s` in `a`, or -1.
long At(const Argv& a, const std::string& s) {
  auto it = std::find(a.begin(), a.end(), s);
  return it == a.end() ? -1 : it - a.begin();
}

TEST(ToolFor, PicksTheCompilerPerLanguageAndBackend) {
  EXPECT_EQ(*ToolFor(Language::kCpp, Backend::kCpu), Tool::kCxx);
  EXPECT_EQ(*ToolFor(Language::kCuda, Backend::kCuda), Tool::kNvcc);
  EXPECT_EQ(*ToolFor(Language::kHip, Backend::kCuda), Tool::kNvcc);
  EXPECT_EQ(*ToolFor(Language::kHip, Backend::kHip), Tool::kHipcc);
  EXPECT_FALSE(ToolFor(Language::kCuda, Backend::kCpu).ok());
  EXPECT_FALSE(ToolFor(Language::kCuda, Backend::kHip).ok());
  EXPECT_FALSE(ToolFor(Language::kHip, Backend::kCpu).ok());
  EXPECT_FALSE(ToolFor(Language::kCpp, Backend::kCuda).ok());
}

TEST(ArchFlags, MapsTargetsPerTool) {
  EXPECT_EQ(*ArchFlags(Tool::kNvcc, "sm_90"), (Argv{"-gencode", "arch=compute_90,code=[sm_90,compute_90]"}));
  EXPECT_EQ(*ArchFlags(Tool::kNvcc, "sm_90a"), (Argv{"-gencode", "arch=compute_90a,code=[sm_90a,compute_90a]"}));
  EXPECT_EQ(*ArchFlags(Tool::kHipcc, "gfx90a"), (Argv{"--offload-arch=gfx90a"}));
  EXPECT_EQ(*ArchFlags(Tool::kHipcc, "gfx90a:xnack-"), (Argv{"--offload-arch=gfx90a:xnack-"}));
  EXPECT_TRUE(ArchFlags(Tool::kNvcc, "")->empty());
  EXPECT_TRUE(ArchFlags(Tool::kCxx, "x86_64")->empty());
  EXPECT_FALSE(ArchFlags(Tool::kNvcc, "gfx942").ok());
  EXPECT_FALSE(ArchFlags(Tool::kHipcc, "sm_90").ok());
  EXPECT_FALSE(ArchFlags(Tool::kNvcc, "sm_90; rm -rf /").ok());
}

TEST(AssembleCommand, HostCxxBuildsASharedObjectAgainstTorch) {
  auto cmd = AssembleCommand(Request(Language::kCpp, Backend::kCpu), MakeSetup(Tool::kCxx), kSlots);
  ASSERT_TRUE(cmd.ok()) << cmd.error();
  const Argv& a = cmd->argv;
  EXPECT_EQ(a[0], "/bin/g++");
  for (const char* f : {"-O2", "-std=c++17", "-fPIC", "-shared", "-D_GLIBCXX_USE_CXX11_ABI=1",
                        "-DTORCH_API_INCLUDE_EXTENSION_H", "-DTORCH_EXTENSION_NAME=kv_0123456789abcdef",
                        "-L/t/lib", "-Wl,-rpath,/t/lib", "-lc10", "-ltorch", "-ltorch_cpu", "-ltorch_python"})
    EXPECT_TRUE(Has(a, f)) << f;
  EXPECT_EQ(a[At(a, "/t/include") - 1], "-isystem");
  EXPECT_EQ(a[At(a, "/py/include") - 1], "-isystem");
  EXPECT_EQ(a[At(a, "-o") + 1], "/o/out");
  EXPECT_LT(At(a, "/c/relu.src"), At(a, "-lc10"));  // libraries after the source
  EXPECT_FALSE(Has(a, "-c"));
  EXPECT_EQ(cmd->variant, "");
}

TEST(AssembleCommand, FollowsTheTorchAbiAndDefaultsTheLibraries) {
  BuildRequest r = Request(Language::kCpp, Backend::kCpu);
  r.torch.cxx11_abi = false;
  r.torch.libraries.clear();
  auto cmd = AssembleCommand(r, MakeSetup(Tool::kCxx), kSlots);
  ASSERT_TRUE(cmd.ok());
  EXPECT_TRUE(Has(cmd->argv, "-D_GLIBCXX_USE_CXX11_ABI=0"));
  EXPECT_TRUE(Has(cmd->argv, "-ltorch_python"));
}

TEST(AssembleCommand, ExtensionsUseTheTorchsStandardAndNativeSourcesCxx17) {
  for (auto [language, backend, tool] : {std::tuple{Language::kCpp, Backend::kCpu, Tool::kCxx},
                                         std::tuple{Language::kCuda, Backend::kCuda, Tool::kNvcc},
                                         std::tuple{Language::kHip, Backend::kHip, Tool::kHipcc}}) {
    BuildRequest r = Request(language, backend);
    r.torch.cxx_standard = "c++20";  // e.g. PyTorch 2.15, whose headers require it
    auto ext = AssembleCommand(r, MakeSetup(tool, /*torch_has_hip=*/true), kSlots);
    ASSERT_TRUE(ext.ok()) << ext.error();
    EXPECT_TRUE(Has(ext->argv, "-std=c++20")) << ToolName(tool);
    EXPECT_FALSE(Has(ext->argv, "-std=c++17")) << ToolName(tool);
    r.kind = SourceKind::kNative;  // nothing of PyTorch's
    auto native = AssembleCommand(r, MakeSetup(tool), kSlots);
    ASSERT_TRUE(native.ok()) << native.error();
    EXPECT_TRUE(Has(native->argv, "-std=c++17")) << ToolName(tool);
  }
  BuildRequest r = Request(Language::kCpp, Backend::kCpu);
  r.torch.cxx_standard = "c++20";
  auto pch = AssemblePchCommand(r, MakeSetup(Tool::kCxx), "/s/h.h", "/s/h.h.gch");
  ASSERT_TRUE(pch.ok()) << pch.error();
  EXPECT_TRUE(Has(pch->argv, "-std=c++20"));
}

TEST(AssembleCommand, CompileOnlyStopsAtTheObjectFile) {
  BuildRequest r = Request(Language::kCpp, Backend::kCpu);
  r.compile_only = true;
  r.extra_flags = {"-DEXTRA=1"};
  auto cmd = AssembleCommand(r, MakeSetup(Tool::kCxx), kSlots);
  ASSERT_TRUE(cmd.ok());
  const Argv& a = cmd->argv;
  EXPECT_TRUE(Has(a, "-c"));
  EXPECT_FALSE(Has(a, "-shared"));
  EXPECT_FALSE(Has(a, "-lc10"));
  EXPECT_LT(At(a, "-DEXTRA=1"), At(a, "/c/relu.src"));
}

TEST(AssembleCommand, NvccForCuda) {
  auto cmd = AssembleCommand(Request(Language::kCuda, Backend::kCuda, "sm_90"), MakeSetup(Tool::kNvcc), kSlots);
  ASSERT_TRUE(cmd.ok()) << cmd.error();
  const Argv& a = cmd->argv;
  EXPECT_EQ(a[0], "/bin/nvcc");
  EXPECT_EQ(a[At(a, "-gencode") + 1], "arch=compute_90,code=[sm_90,compute_90]");
  EXPECT_EQ(a[At(a, "-Xcompiler") + 1], "-fPIC");
  for (const char* f : {"--expt-relaxed-constexpr", "-D__CUDA_NO_HALF_OPERATORS__",
                        "-D__CUDA_NO_BFLOAT16_CONVERSIONS__", "-lc10_cuda", "-ltorch_cuda", "-shared"})
    EXPECT_TRUE(Has(a, f)) << f;
  EXPECT_EQ(a[At(a, "-cudart") + 1], "shared");
  EXPECT_EQ(a[At(a, "-Xlinker") + 1], "-rpath,/t/lib");
  EXPECT_FALSE(Has(a, "-x"));
  EXPECT_FALSE(Has(a, "/src/include_hip"));
}

TEST(AssembleCommand, HipOnNvidiaPutsThePortabilityHeadersFirst) {
  auto cmd = AssembleCommand(Request(Language::kHip, Backend::kCuda, "sm_90"), MakeSetup(Tool::kNvcc), kSlots);
  ASSERT_TRUE(cmd.ok()) << cmd.error();
  const Argv& a = cmd->argv;
  EXPECT_EQ(cmd->variant, "hip-on-nvidia");
  long hip = At(a, "/src/include_hip");
  ASSERT_GT(hip, 0);
  EXPECT_EQ(a[hip - 1], "-I");
  EXPECT_LT(hip, At(a, "/t/include"));
  EXPECT_EQ(a[At(a, "-x") + 1], "cu");
  EXPECT_EQ(At(a, "-x") + 2, At(a, "/c/relu.src"));
  EXPECT_FALSE(Has(a, "-D__CUDA_NO_BFLOAT16_CONVERSIONS__"));  // hip_bfloat16 converts
}

TEST(AssembleCommand, HipccOnRocm) {
  auto cmd = AssembleCommand(Request(Language::kHip, Backend::kHip, "gfx942"),
                             MakeSetup(Tool::kHipcc, /*torch_has_hip=*/true), kSlots);
  ASSERT_TRUE(cmd.ok()) << cmd.error();
  const Argv& a = cmd->argv;
  for (const char* f : {"--offload-arch=gfx942", "-fPIC", "-shared", "-DUSE_ROCM=1",
                        "-lc10_hip", "-ltorch_hip", "-lamdhip64", "-Wl,-rpath,/t/lib"})
    EXPECT_TRUE(Has(a, f)) << f;
  EXPECT_FALSE(Has(a, "/src/include_hip/compile_only"));
  EXPECT_EQ(cmd->variant, "");
}

TEST(AssembleCommand, HipccWithoutTorchHipOnlyCompileChecksWithShims) {
  BuildRequest r = Request(Language::kHip, Backend::kHip, "gfx90a");
  auto linked = AssembleCommand(r, MakeSetup(Tool::kHipcc), kSlots);
  ASSERT_FALSE(linked.ok());
  EXPECT_NE(linked.error().find("compile_only"), std::string::npos);
  r.compile_only = true;
  auto cmd = AssembleCommand(r, MakeSetup(Tool::kHipcc), kSlots);
  ASSERT_TRUE(cmd.ok()) << cmd.error();
  const Argv& a = cmd->argv;
  EXPECT_EQ(cmd->variant, "compile-only shims");
  long shims = At(a, "/src/include_hip/compile_only");
  ASSERT_GT(shims, 0);
  EXPECT_LT(shims, At(a, "/t/include"));
  EXPECT_TRUE(Has(a, "-c"));
  EXPECT_FALSE(Has(a, "-lc10_hip"));
}

TEST(AssembleCommand, RejectsWhatCannotBeBuilt) {
  EXPECT_FALSE(AssembleCommand(Request(Language::kCuda, Backend::kCpu), MakeSetup(Tool::kNvcc), kSlots).ok());
  EXPECT_FALSE(AssembleCommand(Request(Language::kCuda, Backend::kCuda, "gfx90a"), MakeSetup(Tool::kNvcc), kSlots).ok());
  EXPECT_FALSE(AssembleCommand(Request(Language::kCpp, Backend::kCpu), MakeSetup(Tool::kNvcc), kSlots).ok());
}

// g++ uses a .gch only when it was made with the flags of the compile using it.
TEST(AssemblePchCommand, HasTheCandidateCompileFlagsExceptTheModuleName) {
  for (bool compile_only : {false, true}) {
    BuildRequest r = Request(Language::kCpp, Backend::kCpu);
    r.extra_flags = {"-DEXTRA=1", "-march=native"};
    r.compile_only = compile_only;
    CommandSlots slots = kSlots;
    slots.pch_header = "/cache/pch/ab/abcd/kvault_torch_pch.h";
    auto cand = AssembleCommand(r, MakeSetup(Tool::kCxx), slots);
    auto pch = AssemblePchCommand(r, MakeSetup(Tool::kCxx), "/s/kvault_torch_pch.h", "/s/kvault_torch_pch.h.gch");
    ASSERT_TRUE(cand.ok() && pch.ok());
    // The candidate's argv up to its -Winvalid-pch, without the module's define ...
    Argv compile(cand->argv.begin(), cand->argv.begin() + At(cand->argv, "-Winvalid-pch"));
    compile.erase(compile.begin() + At(compile, "-DTORCH_EXTENSION_NAME=kv_0123456789abcdef"));
    // ... is the PCH command up to its -x.
    const Argv& p = pch->argv;
    EXPECT_EQ(Argv(p.begin(), p.begin() + At(p, "-x")), compile);
    EXPECT_EQ(Argv(p.begin() + At(p, "-x"), p.end()),
              (Argv{"-x", "c++-header", "/s/kvault_torch_pch.h", "-o", "/s/kvault_torch_pch.h.gch"}));
    for (const char* f : {"-O2", "-std=c++17", "-fPIC", "-D_GLIBCXX_USE_CXX11_ABI=1", "-DEXTRA=1"})
      EXPECT_TRUE(Has(p, f)) << f;
    EXPECT_FALSE(Has(p, "-shared"));
    EXPECT_FALSE(Has(p, "-c"));
  }
}

TEST(AssemblePchCommand, FollowsTheTorchAbi) {
  BuildRequest r = Request(Language::kCpp, Backend::kCpu);
  r.torch.cxx11_abi = false;
  auto pch = AssemblePchCommand(r, MakeSetup(Tool::kCxx), "/h", "/h.gch");
  ASSERT_TRUE(pch.ok());
  EXPECT_TRUE(Has(pch->argv, "-D_GLIBCXX_USE_CXX11_ABI=0"));
}

TEST(AssemblePchCommand, IsForGxxOnly) {
  EXPECT_FALSE(AssemblePchCommand(Request(Language::kCuda, Backend::kCuda, "sm_90"), MakeSetup(Tool::kNvcc), "/h", "/o").ok());
  EXPECT_FALSE(AssemblePchCommand(Request(Language::kHip, Backend::kHip, "gfx90a"),
                                  MakeSetup(Tool::kHipcc, true), "/h", "/o").ok());
  CommandSlots slots = kSlots;
  slots.pch_header = "/h";
  EXPECT_FALSE(AssembleCommand(Request(Language::kCuda, Backend::kCuda, "sm_90"), MakeSetup(Tool::kNvcc), slots).ok());
}

TEST(AssembleCommand, ForcesThePchInRightBeforeTheSource) {
  CommandSlots slots = kSlots;
  slots.pch_header = "/cache/pch/ab/abcd/kvault_torch_pch.h";
  auto cmd = AssembleCommand(Request(Language::kCpp, Backend::kCpu), MakeSetup(Tool::kCxx), slots);
  ASSERT_TRUE(cmd.ok()) << cmd.error();
  const Argv& a = cmd->argv;
  long src = At(a, "/c/relu.src");
  ASSERT_GE(src, 3);
  EXPECT_EQ(Argv(a.begin() + src - 3, a.begin() + src),
            (Argv{"-Winvalid-pch", "-include", "/cache/pch/ab/abcd/kvault_torch_pch.h"}));
  EXPECT_TRUE(Has(a, "-DTORCH_EXTENSION_NAME=kv_0123456789abcdef"));
  // Without a header the command is as it always was.
  auto plain = AssembleCommand(Request(Language::kCpp, Backend::kCpu), MakeSetup(Tool::kCxx), kSlots);
  ASSERT_TRUE(plain.ok());
  Argv without = a;
  without.erase(without.begin() + src - 3, without.begin() + src);
  EXPECT_EQ(plain->argv, without);
}

BuildRequest NativeRequest(Language l, Backend b, std::string arch = "") {
  BuildRequest r = Request(l, b, std::move(arch));
  r.kind = SourceKind::kNative;
  return r;
}

CompilerSetup NativeSetup(Tool tool, bool torch_has_hip = false) {
  CompilerSetup s = MakeSetup(tool, torch_has_hip);
  s.native_include_dir = "/src/include";
  return s;
}

// Nothing of PyTorch's: no -isystem, -l, torch defines or module name.
void ExpectNoTorch(const Argv& a) {
  for (const std::string& arg : a) {
    EXPECT_NE(arg, "-isystem");
    EXPECT_NE(arg.rfind("-l", 0), 0u) << arg;
    EXPECT_EQ(arg.find("TORCH"), std::string::npos) << arg;
    EXPECT_EQ(arg.find("/t/"), std::string::npos) << arg;
    EXPECT_EQ(arg.find("__CUDA_NO_HALF"), std::string::npos) << arg;
  }
}

TEST(AssembleCommand, TheLiteExtensionBuildPutsItsHeadersFirstAndLinksItsObject) {
  CommandSlots slots = kSlots;
  slots.ext_include_dir = "/src/include_lite";
  slots.link_object = "/cache/kvault_lite.o";
  slots.ext_defines = {"-DKVAULT_LITE_HALF=1"};
  for (auto [request, tool] : {std::pair{Request(Language::kCpp, Backend::kCpu), Tool::kCxx},
                               std::pair{Request(Language::kCuda, Backend::kCuda, "sm_90"), Tool::kNvcc}}) {
    auto cmd = AssembleCommand(request, MakeSetup(tool), slots);
    ASSERT_TRUE(cmd.ok()) << cmd.error();
    const Argv& a = cmd->argv;
    long inc = At(a, "/src/include_lite");
    ASSERT_GT(inc, 0);
    EXPECT_EQ(a[inc - 1], "-I");
    EXPECT_EQ(a[inc + 1], "-DKVAULT_LITE_HALF=1");
    EXPECT_LT(inc, At(a, "/t/include"));  // before every torch include path
    EXPECT_EQ(At(a, "/cache/kvault_lite.o"), At(a, "/c/relu.src") + 1);
    EXPECT_LT(At(a, "/cache/kvault_lite.o"), At(a, "-shared"));
  }

  auto object = AssembleLiteObjectCommand(Request(Language::kCuda, Backend::kCuda, "sm_90"), "/usr/bin/g++",
                                          "/cuda/include", "/src/lite.cc", "/o/lite.o");
  ASSERT_TRUE(object.ok()) << object.error();
  EXPECT_EQ(object->argv[0], "/usr/bin/g++");
  EXPECT_FALSE(Has(object->argv, "/src/include_lite"));  // the object sees PyTorch's headers
  EXPECT_TRUE(Has(object->argv, "-DKVAULT_LITE_CUDA=1"));
  EXPECT_EQ(At(object->argv, "/cuda/include"), At(object->argv, "-DKVAULT_LITE_CUDA=1") + 2);
  EXPECT_EQ(At(object->argv, "/src/lite.cc"), At(object->argv, "-c") + 1);
  EXPECT_FALSE(Has(object->argv, "-DTORCH_EXTENSION_NAME=kv_0123456789abcdef"));
  auto cpu = AssembleLiteObjectCommand(Request(Language::kCpp, Backend::kCpu), "/usr/bin/g++", "/cuda/include",
                                       "/src/lite.cc", "/o/lite.o");
  ASSERT_TRUE(cpu.ok());
  EXPECT_FALSE(Has(cpu->argv, "-DKVAULT_LITE_CUDA=1"));
  // A g++ candidate's flags reach the object but the unit-local ones: candidates that
  // differ only in them share one object.
  BuildRequest flagged = Request(Language::kCpp, Backend::kCpu);
  flagged.extra_flags = {"-O3", "-march=native", "-ffast-math", "-DVARIANT=2", "-fopenmp", "-Wl,-z,now"};
  auto with_flags = AssembleLiteObjectCommand(flagged, "/usr/bin/g++", "", "/src/lite.cc", "/o/lite.o");
  ASSERT_TRUE(with_flags.ok());
  for (const char* local : {"-O3", "-march=native", "-ffast-math"}) EXPECT_FALSE(Has(with_flags->argv, local)) << local;
  for (const char* kept : {"-DVARIANT=2", "-fopenmp", "-Wl,-z,now"}) EXPECT_TRUE(Has(with_flags->argv, kept)) << kept;

  BuildRequest compile_only = Request(Language::kCpp, Backend::kCpu);
  compile_only.compile_only = true;
  EXPECT_FALSE(AssembleCommand(compile_only, MakeSetup(Tool::kCxx), slots).ok());
  EXPECT_FALSE(AssembleCommand(Request(Language::kHip, Backend::kCuda, "sm_90"), MakeSetup(Tool::kNvcc), slots).ok());
  EXPECT_FALSE(AssembleLiteObjectCommand(Request(Language::kHip, Backend::kHip), "/g++", "", "/s", "/o").ok());
}

TEST(AssembleCommand, NativeCxxIsAPlainSharedLibrary) {
  auto cmd = AssembleCommand(NativeRequest(Language::kCpp, Backend::kCpu), NativeSetup(Tool::kCxx), kSlots);
  ASSERT_TRUE(cmd) << cmd.error();
  EXPECT_EQ(cmd->argv, (Argv{"/bin/g++", "-O3", "-std=c++17", "-fPIC", "-I", "/src/include",
                             "/c/relu.src", "-shared", "-o", "/o/out"}));
  EXPECT_EQ(cmd->variant, "native");
}

TEST(AssembleCommand, NativeNvccLinksTheSharedCudaRuntimeOnly) {
  auto cmd = AssembleCommand(NativeRequest(Language::kCuda, Backend::kCuda, "sm_90"), NativeSetup(Tool::kNvcc), kSlots);
  ASSERT_TRUE(cmd) << cmd.error();
  const Argv& a = cmd->argv;
  ExpectNoTorch(a);
  EXPECT_TRUE(Has(a, "arch=compute_90,code=[sm_90,compute_90]"));
  EXPECT_LT(At(a, "/src/include"), At(a, "/c/relu.src"));
  EXPECT_LT(At(a, "-shared"), At(a, "-cudart"));
  EXPECT_FALSE(Has(a, "/src/include_hip"));
}

TEST(AssembleCommand, NativeHipOnNvidiaUsesThePortabilityHeaders) {
  auto cmd = AssembleCommand(NativeRequest(Language::kHip, Backend::kCuda, "sm_90"), NativeSetup(Tool::kNvcc), kSlots);
  ASSERT_TRUE(cmd) << cmd.error();
  const Argv& a = cmd->argv;
  ExpectNoTorch(a);
  EXPECT_LT(At(a, "/src/include_hip"), At(a, "-x"));
  EXPECT_EQ(At(a, "-x") + 1, At(a, "cu"));
  EXPECT_EQ(At(a, "cu") + 1, At(a, "/c/relu.src"));
  EXPECT_EQ(cmd->variant, "native, hip-on-nvidia");
}

TEST(AssembleCommand, NativeHipccNeedsNoTorchHipAndNoShims) {
  // Full builds work without a ROCm PyTorch: nothing of PyTorch's is included.
  auto full = AssembleCommand(NativeRequest(Language::kHip, Backend::kHip, "gfx90a"), NativeSetup(Tool::kHipcc), kSlots);
  ASSERT_TRUE(full) << full.error();
  ExpectNoTorch(full->argv);
  EXPECT_TRUE(Has(full->argv, "-shared"));
  EXPECT_TRUE(Has(full->argv, "--offload-arch=gfx90a"));
  BuildRequest req = NativeRequest(Language::kHip, Backend::kHip, "gfx90a");
  req.compile_only = true;
  auto only = AssembleCommand(req, NativeSetup(Tool::kHipcc), kSlots);
  ASSERT_TRUE(only) << only.error();
  EXPECT_FALSE(Has(only->argv, "/src/include_hip/compile_only"));
  EXPECT_EQ(Argv(only->argv.end() - 3, only->argv.end()), (Argv{"-c", "-o", "/o/out"}));
  EXPECT_FALSE(Has(only->argv, "-shared"));
}

TEST(AssembleCommand, NativeRejectsAPrecompiledHeader) {
  CommandSlots slots = kSlots;
  slots.pch_header = "/p/torch.h";
  EXPECT_FALSE(AssembleCommand(NativeRequest(Language::kCpp, Backend::kCpu), NativeSetup(Tool::kCxx), slots));
  EXPECT_FALSE(AssembleCommand(NativeRequest(Language::kCuda, Backend::kCpu), NativeSetup(Tool::kNvcc), kSlots));
}

TEST(ShellQuote, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(ShellQuote({"g++", "-O2", "-DX=1", "/a/b.cc"}), "g++ -O2 -DX=1 /a/b.cc");
  EXPECT_EQ(ShellQuote({"nvcc", "arch=compute_90,code=[sm_90,compute_90]"}),
            "nvcc 'arch=compute_90,code=[sm_90,compute_90]'");
  EXPECT_EQ(ShellQuote({"a b", "it's", ""}), "'a b' 'it'\\''s' ''");
}

TEST(UnitLocalFlags, OnlyFlagsNoOtherUnitReliesOn) {
  for (const char* local : {"-O0", "-O2", "-O3", "-Os", "-Ofast", "-Og", "-g", "-g3", "-ggdb", "-w", "-Wall",
                            "-Wno-unused-variable", "-Werror=return-type", "-std=c++17", "-std=gnu++20", "-fPIC",
                            "-pipe", "-march=native", "-mtune=generic", "-ffast-math", "-funroll-loops",
                            "-mavx2", "-mfma", "-mno-avx512f", "-msse4.2", "-fopenmp-simd"})
    EXPECT_TRUE(IsUnitLocalFlag(local)) << local;
  for (const char* shared : {"-DX=1", "-UNDEBUG", "-I/x", "-include", "x.h", "-fopenmp", "-Wl,-rpath,/x",
                             "-Wp,-DX", "-lm", "-fno-rtti", "-D_GLIBCXX_USE_CXX11_ABI=0", "-O3 -DX", "", "-std=c++17;x",
                             "-mavx2;x", "-mcmodel=large", "-mabi=ms"})
    EXPECT_FALSE(IsUnitLocalFlag(shared)) << shared;
}

}  // namespace
}  // namespace kvault
