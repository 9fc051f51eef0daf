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

TEST(BackendMismatchTest, AKernelBenchFileIsNeverRefusedByItsText) {
  // Before, any of these made the file `unsupported` on cpu (no reward, out of pass@k):
  // a comment, a string or dead code was enough. What the file builds is decided by
  // its recorded load_inline calls (CallBuildsCuda), as its own compile_error.
  for (const char* source :
       {"m = load_inline(name='r', cpp_sources=src, functions=['f'])\n# __global__\n",
        "note = '__global__ void k() {}'\nm = load_inline(name='r', cpp_sources=src)\n",
        "if False:\n    m = load_inline(name='r', cpp_sources=c, cuda_sources=relu_source)\n",
        "relu = load_inline(name='relu', cpp_sources=cpp, cuda_sources=relu_source, functions=['relu_cuda'])\n"}) {
    const Candidate c = KernelBenchFile(source);
    for (Backend b : {Backend::kCpu, Backend::kCuda, Backend::kHip}) EXPECT_EQ(BackendMismatch(c, b), "") << source;
  }
}

TEST(BackendMismatchTest, TheVerdictOfAForeignAnswerNamesItsLanguageAndTheBackend) {
  const std::string why = ForeignLanguageVerdict("cuda", Backend::kCpu, "a load_inline call with cuda_sources");
  EXPECT_NE(why.find("CUDA code (a load_inline call with cuda_sources)"), std::string::npos) << why;
  EXPECT_NE(why.find("cpu backend"), std::string::npos) << why;
  EXPECT_NE(ForeignLanguageVerdict("hip", Backend::kCpu, "seen").find("HIP"), std::string::npos);
}

TEST(MissingRuntimeTest, ATritonCandidateOnAWorkerWithoutTritonIsTheMachinesLimit) {
  Candidate triton;
  triton.format = CandidateFormat::kTriton;
  triton.language = "triton";
  const Json without = {{"executable", "/usr/bin/python3"}, {"triton", nullptr}};
  const std::string why = MissingRuntime(triton, without);
  EXPECT_NE(why.find("triton package in the worker's Python (/usr/bin/python3)"), std::string::npos) << why;
  EXPECT_NE(why.find("KVAULT_PYTHON"), std::string::npos) << why;
  EXPECT_EQ(MissingRuntime(triton, Json{{"triton", "3.1.0"}}), "");
  EXPECT_EQ(MissingRuntime(triton, Json::object()), "");  // a hello that does not say: as before
  EXPECT_EQ(MissingRuntime(KernelBenchFile("class ModelNew: pass\n"), without), "");  // not Triton
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
