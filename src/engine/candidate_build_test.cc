#include "engine/candidate_build.h"

#include <gtest/gtest.h>

namespace kvault {
namespace {

Candidate KernelBenchFile(const std::string& source) {
  Candidate c;
  c.format = CandidateFormat::kKernelBench;
  c.language = "python";
  c.source = source;
  return c;
}

TEST(BackendMismatchTest, AKernelBenchFileBuildingCudaInlineIsNotForTheCpu) {
  // The habits of LLM-written files: sources in a string, flags as keywords.
  const Candidate cuda = KernelBenchFile(
      "from torch.utils.cpp_extension import load_inline\n"
      "relu = load_inline(name='relu', cpp_sources=cpp, cuda_sources=relu_source,\n"
      "                   functions=['relu_cuda'], verbose=True, extra_cflags=[''])\n");
  EXPECT_TRUE(BuildsGpuCodeInline(cuda));
  EXPECT_NE(BackendMismatch(cuda, Backend::kCpu).find("not cpu"), std::string::npos);
  EXPECT_EQ(BackendMismatch(cuda, Backend::kCuda), "");
  EXPECT_EQ(BackendMismatch(cuda, Backend::kHip), "");  // PyTorch hipifies it there

  const Candidate kernel_only = KernelBenchFile("src = '__global__ void k() {}'\nm = load_inline(**kw)\n");
  EXPECT_TRUE(BuildsGpuCodeInline(kernel_only));
}

TEST(BackendMismatchTest, CppOnlyAndPlainPythonFilesRunOnTheCpu) {
  for (const char* source : {"m = load_inline(name='r', cpp_sources=src, functions=['f'])\n",
                             "m = load_inline(name='r', cpp_sources=src, cuda_sources=None)\n",
                             "m = load_inline(name='r', cpp_sources=src, cuda_sources=[])\n",
                             "m = load_inline(name='r', cpp_sources=src, cuda_sources = '')\n",
                             "import torch\nclass ModelNew(torch.nn.Module): pass\n"}) {
    const Candidate c = KernelBenchFile(source);
    EXPECT_FALSE(BuildsGpuCodeInline(c)) << source;
    EXPECT_EQ(BackendMismatch(c, Backend::kCpu), "") << source;
  }
}

TEST(BackendMismatchTest, CompiledCandidatesAreJudgedByTheirLanguage) {
  Candidate cu;
  cu.format = CandidateFormat::kExtension;
  cu.language = "cuda";
  EXPECT_NE(BackendMismatch(cu, Backend::kCpu), "");
  EXPECT_EQ(BackendMismatch(cu, Backend::kCuda), "");
  cu.language = "cpp";
  EXPECT_EQ(BackendMismatch(cu, Backend::kCpu), "");
  EXPECT_NE(BackendMismatch(cu, Backend::kCuda), "");
}

}  // namespace
}  // namespace kvault
