#include "toolchain/candidate_flags.h"

#include <gtest/gtest.h>

namespace kvault {
namespace {

using Argv = std::vector<std::string>;

Argv Compile(Tool tool, const Argv& given) {
  auto flags = CandidateCompileFlags(tool, given);
  EXPECT_TRUE(flags.ok()) << (flags ? "" : flags.error());
  return flags ? *flags : Argv{"<refused>"};
}

std::string Refusal(Tool tool, const Argv& given) {
  auto flags = CandidateCompileFlags(tool, given);
  return flags ? "" : flags.error();
}

TEST(CandidateFlags, WhatLlmFilesPassIsNormalised) {
  EXPECT_EQ(Compile(Tool::kCxx, {""}), Argv{});
  EXPECT_EQ(Compile(Tool::kCxx, {"", " ", "-O3", "-O3"}), Argv{"-O3"});
  EXPECT_EQ(Compile(Tool::kNvcc, {"-O3 --use_fast_math", "-O3"}), (Argv{"-O3", "--use_fast_math"}));
  EXPECT_EQ(Compile(Tool::kCxx, {"-std=c++17", "-fopenmp", "-march=native", "-DBLOCK=256", "-Wno-unused"}),
            (Argv{"-std=c++17", "-fopenmp", "-march=native", "-DBLOCK=256", "-Wno-unused"}));
  // Warnings whose names start like -Wl, -Wa and -Wp are warnings.
  EXPECT_EQ(Compile(Tool::kCxx, {"-Wpedantic", "-Waddress", "-Wlogical-op"}),
            (Argv{"-Wpedantic", "-Waddress", "-Wlogical-op"}));
}

TEST(CandidateFlags, NvccOptionsWithTheirValues) {
  EXPECT_EQ(Compile(Tool::kNvcc, {"-arch=sm_90", "-gencode", "arch=compute_90,code=sm_90", "-Xptxas", "-v,-O3",
                                  "-Xcompiler", "-fopenmp", "--maxrregcount=64", "-lineinfo",
                                  "-U__CUDA_NO_HALF_OPERATORS__", "--expt-relaxed-constexpr", "-std=c++17"}),
            (Argv{"-arch=sm_90", "-gencode", "arch=compute_90,code=sm_90", "-Xptxas", "-v,-O3", "-Xcompiler",
                  "-fopenmp", "--maxrregcount=64", "-lineinfo", "-U__CUDA_NO_HALF_OPERATORS__",
                  "--expt-relaxed-constexpr", "-std=c++17"}));
  // A pair given twice counts once; the same option with another value is kept.
  EXPECT_EQ(Compile(Tool::kNvcc, {"-Xptxas -v", "-Xptxas", "-v", "-Xptxas=-O3"}),
            (Argv{"-Xptxas", "-v", "-Xptxas=-O3"}));
  EXPECT_EQ(Compile(Tool::kNvcc, {"-gencode=arch=compute_80,code=[sm_80,compute_80]"}),
            Argv{"-gencode=arch=compute_80,code=[sm_80,compute_80]"});
}

TEST(CandidateFlags, CommandsFilesAndPathsAreRefusedByName) {
  for (const char* flag : {"-wrapper", "@/tmp/opts", "-fplugin=/tmp/p.so", "-B/tmp", "-specs=/tmp/s",
                           "-Wl,--wrap=malloc", "-Wp,-MD,/tmp/x", "-Wa,--defsym", "-I/root", "-isystem",
                           "-include", "-o", "-x", "-save-temps", "-fdump-tree-all", "-L/tmp"})
    EXPECT_NE(Refusal(Tool::kCxx, {flag}).find(std::string("flag '") + flag), std::string::npos) << flag;
  EXPECT_EQ(Refusal(Tool::kCxx, {"-wrapper /bin/sh,-c,id"}), "flag '-wrapper' is not allowed for g++");
  for (const char* flag : {"-ccbin=/tmp/cc", "--compiler-bindir=/tmp", "-Xcompiler=@/tmp/f", "--keep",
                           "--dryrun", "-Xlinker", "-I/tmp", "--run", "-DX=$(id)", "-DX=`id`", "-DX=a;id"})
    EXPECT_NE(Refusal(Tool::kNvcc, {flag}), "") << flag;
  EXPECT_EQ(Refusal(Tool::kNvcc, {"-Xcompiler", "-O3,-wrapper"}),
            "flag '-Xcompiler -O3,-wrapper' is not allowed for nvcc");
  EXPECT_EQ(Refusal(Tool::kNvcc, {"-ccbin", "/bin/sh"}), "flag '-ccbin' is not allowed for nvcc");
  EXPECT_EQ(Refusal(Tool::kNvcc, {"-Xcompiler"}), "flag '-Xcompiler' has no value");
  // g++ never reads nvcc's options, nor nvcc g++'s.
  EXPECT_NE(Refusal(Tool::kCxx, {"--use_fast_math"}), "");
  EXPECT_NE(Refusal(Tool::kNvcc, {"-fopenmp"}), "");
}

// What models write out of habit passes, in every spelling they use.
TEST(CandidateFlags, HabitsPass) {
  const Argv cxx = {"-O3", "-O2", "", "-std=c++17", "-fopenmp", "-march=native", "-DNDEBUG", "-Wno-unused-variable",
                    "-ffast-math", "-funroll-loops", "-mavx2", "-mfma", "-fPIC", "-w", "-g", "-Wall", "-Wextra"};
  for (const std::string& flag : cxx) EXPECT_EQ(Refusal(Tool::kCxx, {flag}), "") << flag;
  const std::vector<Argv> nvcc = {
      {"-O3"}, {"-O2"}, {""}, {"--use_fast_math"}, {"-use_fast_math"}, {"-std=c++17"}, {"-arch=sm_90"},
      {"-arch", "sm_90"}, {"--gpu-architecture=sm_90a"}, {"-gencode=arch=compute_90,code=sm_90"},
      {"-gencode", "arch=compute_90,code=sm_90"}, {"--generate-code=arch=compute_80,code=[sm_80,compute_80]"},
      {"-Xptxas -O3"}, {"-Xptxas", "-O3,-v"}, {"--ptxas-options=-v"}, {"-lineinfo"}, {"-DNDEBUG"},
      {"-Xcompiler", "-fopenmp"}, {"-Xcompiler=-O3,-march=native"}, {"--compiler-options", "-O3"},
      {"--expt-relaxed-constexpr"}, {"--extended-lambda"}, {"-Wno-deprecated-gpu-targets"}, {"-maxrregcount=64"},
      {"--ftz=true", "--prec-div=false"}, {"-res-usage"}, {"-U__CUDA_NO_HALF_OPERATORS__"}};
  for (const Argv& flags : nvcc) EXPECT_EQ(Refusal(Tool::kNvcc, flags), "") << flags[0];
  EXPECT_TRUE(CandidateLinkFlags({"-lcublas", "-lcublasLt", "-lcudart", "-lcurand", "-lgomp", ""}).ok());
  // Libraries among compile flags: ignored by PyTorch's compile (-c), dropped here.
  EXPECT_EQ(Compile(Tool::kNvcc, {"-O3", "-lcublas", "-L/usr/local/cuda/lib64 -lcublasLt"}), Argv{"-O3"});
  EXPECT_EQ(Compile(Tool::kCxx, {"-fopenmp", "-lgomp"}), Argv{"-fopenmp"});
  EXPECT_NE(Refusal(Tool::kNvcc, {"-lmylib"}), "");
  EXPECT_NE(Refusal(Tool::kNvcc, {"-Xcompiler", "-lcublas"}), "");
}

// Every way to run a program, load code or read or write a file of the candidate's
// choosing through a flag: refused by name, on both compilers, in every spelling
// (joined or separate value, -Xcompiler's forms, one entry holding several flags).
TEST(CandidateFlags, CommandsPluginsAndFilesAreRefusedInEverySpelling) {
  // Single tokens g++ would take as asking for one of them (or its first part).
  const Argv hostile = {
      "-wrapper", "-fplugin=x.so", "-fplugin-arg-x-y=z", "-specs=f", "--specs=f", "--specs", "-B/tmp", "-B",
      "-Bprefix", "@f", "@/etc/passwd", "-Xlinker", "-Xassembler", "-Xpreprocessor", "-Wl,--wrap=malloc",
      "-Wl,-rpath,/tmp", "-Wl,@f", "-Wl,-plugin,x.so", "-Wl", "-Wa", "-Wp", "-Wl=x", "-Wa,-o,/tmp/x",
      "-Wp,-MD,/tmp/x", "-include", "-imacros", "-I/", "-I", "-isystem", "-idirafter", "-iquote", "-iprefix",
      "-iwithprefix", "-isysroot", "--sysroot=/", "--sysroot", "-L/tmp", "-l:x.so", "-lx", "-o", "-o/tmp/x",
      "-MF", "-MF/tmp/x", "-MD", "-MMD", "-MT", "-M", "-save-temps", "-save-temps=obj", "-dumpdir", "-dumpbase",
      "-fdump-tree-all", "-fdump-rtl-all=/tmp/x", "-fdump-ipa-all", "-fprofile-generate", "-fprofile-generate=/p",
      "-fprofile-use=/p", "-fprofile-dir=/p", "-fauto-profile=/p", "-fcoverage", "--coverage", "-frecord-gcc-switches",
      "-fdebug-prefix-map=/=/x", "-ffile-prefix-map=/=/x", "-fuse-ld=lld", "--ld-path=/tmp/ld", "-fcallgraph-info",
      "-fstack-usage", "-flto", "-flto=auto", "-E", "-S", "-c", "-x", "-xc", "-v", "-###", "-pass-exit-codes",
      "-print-search-dirs", "-shared", "-static", "-nostdinc", "-nostdlib", "-T", "-u", "-z", "-e", "-H",
      "-ftime-report", "-fopt-info=/tmp/x", "-fdiagnostics-format=sarif-file", "-fcompare-debug=x",
      "-fsanitize=address", "-finstrument-functions", "-Xclang", "-fmodules-cache-path=/x", "--param=x=1",
      "--help", "--version", "--run", "-run", "--dryrun", "-ccbin", "--compiler-bindir", "CC=/bin/sh",
      "-DX=$(id)", "-DX=`id`", "-DX=a;id", "-DX=a|id", "-DX=a&&id", "-DX=\"a", "-DX='a'", "-DX=a>/tmp/x",
      "-DX=$HOME", "-DX=a\\", "-DX=*", "-DX=?", "-DX=[a]", "-DX=a,b", "-D", "-U", "-D1X", "-O3;id", "-march=$(id)",
      "-fopenmp=libiomp5", "-std=c++17;id", "-o3", "-WL,-rpath,/x", "-FPLUGIN=x.so"};
  for (const std::string& flag : hostile) {
    EXPECT_EQ(Refusal(Tool::kCxx, {flag}), "flag '" + flag + "' is not allowed for g++") << flag;
    EXPECT_NE(Refusal(Tool::kNvcc, {flag}), "") << flag;
    // Handed to g++ through nvcc, alone or after an allowed option, in both of nvcc's
    // spellings, the value joined or separate.
    for (const std::string forward : {"-Xcompiler", "--compiler-options"}) {
      EXPECT_NE(Refusal(Tool::kNvcc, {forward + "=" + flag}), "") << forward << " " << flag;
      EXPECT_NE(Refusal(Tool::kNvcc, {forward + "=-O3," + flag}), "") << forward << " " << flag;
      EXPECT_NE(Refusal(Tool::kNvcc, {forward, flag}), "") << forward << " " << flag;
      EXPECT_NE(Refusal(Tool::kNvcc, {forward + " -O3," + flag}), "") << forward << " " << flag;
    }
  }
  // nvcc's own options that run programs, read or write files, or hand options on.
  const Argv nvcc_hostile = {
      "-ccbin=/tmp", "--compiler-bindir=/tmp", "-ccbin", "--compiler-bindir", "-Xlinker=-plugin", "--linker-options=x",
      "-Xnvlink=x", "--nvlink-options=x", "-Xcudafe=x", "--cudafe-options=x", "-Xarchive=x", "--archive-options=x",
      "-Xptxas=--input-as-string", "-Xptxas=-o,/tmp/x", "-Xptxas=@f", "--ptxas-options=--compile-as-tools-patch",
      "--run", "-run", "--run-args=x", "--dryrun", "-dryrun", "--keep", "-keep", "--keep-dir=/tmp", "-keep-dir",
      "-odir", "--output-directory=/tmp", "--output-file=/tmp/x", "-o", "--options-file=f", "-optf", "--pre-include=f",
      "-include", "--include-path=/", "-I/tmp", "--system-include=/", "-isystem", "--library-path=/tmp", "-L/tmp",
      "--library=x", "-lx", "-x", "-E", "--preprocess", "--save-temps", "-save-temps", "--profile", "-pg",
      "-MF", "--dependency-output=/tmp/x", "-MD", "--generate-dependencies", "--time=/tmp/x", "-time",
      "--fdevice-time-trace=/tmp/x", "--list-gpu-arch", "-arch=sm_90;id", "-gencode=arch=compute_90,code=sm_90;id",
      "-Werror=a;b", "-XCOMPILER=-O3", "--Xcompiler=-O3", "-xcompiler=-O3", "--COMPILER-OPTIONS=-O3",
      "-DX=$(id)", "-Xcompiler=-DX=$(id)", "-Xcompiler=", "-Xcompiler=,", "-Xcompiler==-O3", "-Xptxas="};
  for (const std::string& flag : nvcc_hostile) EXPECT_NE(Refusal(Tool::kNvcc, {flag}), "") << flag;
  EXPECT_EQ(Refusal(Tool::kNvcc, {"--compiler-bindir", "/tmp"}), "flag '--compiler-bindir' is not allowed for nvcc");
  EXPECT_EQ(Refusal(Tool::kNvcc, {"-Xptxas", "-O3", "-Xptxas"}), "flag '-Xptxas' has no value");
  // A separate value is checked as the option's: never read as a flag of its own.
  EXPECT_EQ(Refusal(Tool::kNvcc, {"-arch", "-ccbin"}), "flag '-arch -ccbin' is not allowed for nvcc");
  EXPECT_EQ(Refusal(Tool::kNvcc, {"--compiler-options", "-B/tmp"}),
            "flag '--compiler-options -B/tmp' is not allowed for nvcc");
  EXPECT_EQ(Refusal(Tool::kNvcc, {"-Xcompiler", "-O3,-Wl,-rpath,/tmp"}),
            "flag '-Xcompiler -O3,-Wl,-rpath,/tmp' is not allowed for nvcc");
}

// An entry is split at any whitespace, as the shell that runs PyTorch's build splits
// it: a flag hidden after a space, a tab or a newline is a flag of its own.
TEST(CandidateFlags, WhitespaceNeverHidesAFlag) {
  EXPECT_EQ(Refusal(Tool::kCxx, {"-O3 -o x"}), "flag '-o' is not allowed for g++");
  EXPECT_EQ(Refusal(Tool::kCxx, {"-O3\n-wrapper /bin/sh,-c,id"}), "flag '-wrapper' is not allowed for g++");
  EXPECT_EQ(Refusal(Tool::kCxx, {"-O3\t-B/tmp"}), "flag '-B/tmp' is not allowed for g++");
  EXPECT_EQ(Refusal(Tool::kCxx, {"-O3\r\v\f-B/tmp"}), "flag '-B/tmp' is not allowed for g++");
  EXPECT_EQ(Refusal(Tool::kCxx, {"-DX=a b"}), "flag 'b' is not allowed for g++");
  EXPECT_EQ(Refusal(Tool::kNvcc, {"-O3 -Xcompiler -wrapper,x"}), "flag '-Xcompiler -wrapper,x' is not allowed for nvcc");
  EXPECT_NE(Refusal(Tool::kCxx, {std::string("-O3\0-o", 6)}), "");
  EXPECT_NE(Refusal(Tool::kNvcc, {std::string("-Xcompiler=-O3\0-B/tmp", 21)}), "");
  EXPECT_FALSE(CandidateLinkFlags({std::string("-lcublas\0-T", 11)}).ok());
  EXPECT_FALSE(CandidateLinkFlags({"-lcublas\n-Wl,-rpath,/tmp"}).ok());
}

// std::regex matches by recursion: a flag of 40,000 characters overflowed the stack
// and ended the engine. A long flag, folder or name is refused unread, a long list too.
TEST(CandidateFlags, LongFlagsAndListsAreRefusedNotRead) {
  const std::string a(1 << 20, 'a');
  EXPECT_NE(Refusal(Tool::kCxx, {"-DX=" + a}).find("is not allowed for g++"), std::string::npos);
  EXPECT_NE(Refusal(Tool::kCxx, {"-Wl," + a}), "");
  EXPECT_NE(Refusal(Tool::kNvcc, {"-DX=" + a}), "");
  EXPECT_NE(Refusal(Tool::kNvcc, {"-Xcompiler", "-DX=" + a}), "");
  std::string many_items = "-Xcompiler=-O3";
  for (int i = 0; i < 100000; ++i) many_items += ",-O3";
  EXPECT_NE(Refusal(Tool::kNvcc, {many_items}), "");
  EXPECT_NE(Refusal(Tool::kNvcc, {"-Xptxas=-v," + a}), "");
  EXPECT_FALSE(CandidateLinkFlags({"-l" + a}).ok());
  EXPECT_FALSE(CandidateIncludePaths({a}).ok());
  EXPECT_FALSE(CandidateExtensionName(a));
  EXPECT_EQ(Compile(Tool::kCxx, {"-DX=" + std::string(1000, 'a')}), Argv{"-DX=" + std::string(1000, 'a')});
  // Many flags: a handful is what honest calls pass.
  std::string defines, libraries;
  for (int i = 0; i < 300; ++i) defines += " -DA" + std::to_string(i), libraries += " -lcublas";
  EXPECT_EQ(Refusal(Tool::kCxx, {defines}), "more than 256 flags for g++");
  EXPECT_EQ(CandidateLinkFlags({libraries}).error(), "more than 256 flags for the linker");
  EXPECT_EQ(CandidateIncludePaths(Argv(300, "x")).error(), "more than 256 folders");
}

// PyTorch's build writes each folder as -I<folder> into a line a shell reads.
TEST(CandidateFlags, IncludeFoldersArePlainPaths) {
  auto folders = CandidateIncludePaths({"", " ", "/usr/local/cuda/include", " cutlass/include ", "../x"});
  ASSERT_TRUE(folders.ok()) << folders.error();
  EXPECT_EQ(*folders, (Argv{"/usr/local/cuda/include", "cutlass/include", "../x"}));
  for (const char* folder : {"x -wrapper /bin/sh,-c,id", "x;id", "x`id`", "$(id)", "x\nbuild y: phony", "x$ y",
                             "x|id", "x&id", "'x'", "\"x\"", "x\\", "x*", "x,y", "@f", "x>y"})
    EXPECT_EQ(CandidateIncludePaths({folder}).error(), "folder '" + std::string(folder) + "' is not a plain path")
        << folder;
}

// The extension's name is a define's value in PyTorch's build line, and a folder.
TEST(CandidateFlags, ExtensionNamesArePlain) {
  for (const char* name : {"relu_ext", "my-ext", "ext.v2", "fused_gelu_cuda", "ext2", "_x"})
    EXPECT_TRUE(CandidateExtensionName(name)) << name;
  for (const char* name : {"", ".", "..", "../x", "a/b", "/tmp/x", "x;id", "x y", "x`id`", "$(id)", "x\nbuild",
                           "x #", "x\"", "-x"})
    EXPECT_EQ(CandidateExtensionName(name).error(), "name '" + std::string(name) + "' is not plain") << name;
}

TEST(CandidateFlags, LinkFlags) {
  auto link = CandidateLinkFlags({"", "-lcublas", "-L/usr/local/cuda/lib64", "-lcublas -lcudart"});
  ASSERT_TRUE(link.ok()) << link.error();
  EXPECT_EQ(*link, (Argv{"-lcublas", "-lcudart"}));
  EXPECT_EQ(CandidateLinkFlags({"-L/tmp/evil"}).error(), "flag '-L/tmp/evil' is not allowed for the linker");
  EXPECT_FALSE(CandidateLinkFlags({"-lmylib"}).ok());
  EXPECT_FALSE(CandidateLinkFlags({"-Wl,-rpath,/tmp"}).ok());
  EXPECT_FALSE(CandidateLinkFlags({"/tmp/x.so"}).ok());
  for (const char* flag : {"-l:x.so", "-lcublas,-rpath", "-Wl,--wrap=malloc", "-Xlinker", "-L/", "-L/tmp",
                           "-L/usr/local/cuda/lib64/../../../tmp", "-shared", "-o", "@f", "-T", "-fuse-ld=lld",
                           "-B/tmp", "-wrapper", "-specs=x", "-static", "-nostdlib", "-Wl,@f", "-Wl,-plugin,x.so",
                           "-lcuda;id", "-l$(id)", "-lCUBLAS", "-Lcublas", "-fplugin=x.so", "-rdynamic"})
    EXPECT_EQ(CandidateLinkFlags({flag}).error(), "flag '" + std::string(flag) + "' is not allowed for the linker")
        << flag;
}

TEST(CandidateFlags, LinkFlagsOpenMpAndThreadsAsTheirLibraries) {
  // extra_ldflags=["-fopenmp"] beside "-lgomp": one library, which nvcc's link takes too.
  auto link = CandidateLinkFlags({"-fopenmp", "-lgomp", "-pthread"});
  ASSERT_TRUE(link.ok()) << link.error();
  EXPECT_EQ(*link, (Argv{"-lgomp", "-lpthread"}));
  EXPECT_FALSE(CandidateLinkFlags({"-fopenmp=libiomp5"}).ok());
}

}  // namespace
}  // namespace kvault
