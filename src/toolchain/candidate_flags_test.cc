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

TEST(CandidateFlags, LinkFlags) {
  auto link = CandidateLinkFlags({"", "-lcublas", "-L/usr/local/cuda/lib64", "-lcublas -lcudart"});
  ASSERT_TRUE(link.ok()) << link.error();
  EXPECT_EQ(*link, (Argv{"-lcublas", "-lcudart"}));
  EXPECT_EQ(CandidateLinkFlags({"-L/tmp/evil"}).error(), "flag '-L/tmp/evil' is not allowed for the linker");
  EXPECT_FALSE(CandidateLinkFlags({"-lmylib"}).ok());
  EXPECT_FALSE(CandidateLinkFlags({"-Wl,-rpath,/tmp"}).ok());
  EXPECT_FALSE(CandidateLinkFlags({"/tmp/x.so"}).ok());
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
