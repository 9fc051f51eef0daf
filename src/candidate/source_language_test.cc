#include "candidate/source_language.h"

#include <gtest/gtest.h>

namespace kvault {
namespace {

constexpr char kBinding[] = "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"forward\", &forward); }\n";

TEST(DetectSourceLanguage, MarkersInCommentsAndStringsNeverCount) {
  const std::string cpp = std::string("#include <torch/extension.h>\n") +
                          "// unlike a __global__ kernel, this runs on the host; no <<<grid, block>>> here\n"
                          "/* #include <hip/hip_runtime.h>\n   hipLaunchKernelGGL */\n"
                          "static const char* kNote = \"__global__ <<< cuda_runtime __HIP_PLATFORM\";\n"
                          "torch::Tensor forward(torch::Tensor x) { return x.clamp_min(0); }\n" + kBinding;
  EXPECT_EQ(DetectSourceLanguage(cpp), "cpp");
  // An #include inside a comment is none either.
  EXPECT_EQ(DetectSourceLanguage("// #include <cuda_runtime.h>\nint forward();\n"), "cpp");
}

TEST(DetectSourceLanguage, TheCodeItselfDecides) {
  EXPECT_EQ(DetectSourceLanguage("__global__ void k(float* x) {}\n" + std::string(kBinding)), "cuda");
  EXPECT_EQ(DetectSourceLanguage("#include <cuda_runtime.h>\nint forward();\n"), "cuda");
  EXPECT_EQ(DetectSourceLanguage("void f() { k<<<1, 32>>>(); }\n"), "cuda");
  // HIP code has __global__ kernels too: its header or launch macro says HIP.
  EXPECT_EQ(DetectSourceLanguage("#include \"hip/hip_runtime.h\"\n__global__ void k() {}\n"), "hip");
  EXPECT_EQ(DetectSourceLanguage("#include <hip/hip_runtime.h>\n__global__ void k() {}\n"), "hip");
  EXPECT_EQ(DetectSourceLanguage("void f() { hipLaunchKernelGGL(k, 1, 1, 0, 0); }\n"), "hip");
}

TEST(DetectSourceLanguage, PythonByItsEntryPointAndImports) {
  EXPECT_EQ(DetectSourceLanguage("import torch\nclass ModelNew(torch.nn.Module):\n    pass\n"), "python");
  EXPECT_EQ(DetectSourceLanguage("from torch import nn\n\ndef module_fn(x):\n    return x\n"), "python");
  EXPECT_EQ(DetectSourceLanguage("import triton\n@triton.jit\ndef k(x):\n    pass\n"), "python");
  // A KernelBench file that builds CUDA inline is still Python: what it builds is for
  // its load_inline calls to say, not its text.
  EXPECT_EQ(DetectSourceLanguage("import torch\nsrc = '__global__ void k() {}'\nclass ModelNew:\n    pass\n"),
            "python");
  // Named only in comments: not Python.
  EXPECT_EQ(DetectSourceLanguage("// class ModelNew, import torch\n__global__ void k() {}\n"), "cuda");
  EXPECT_EQ(DetectSourceLanguage("# import torch\n# class ModelNew\nint forward();\n"), "cpp");
}

}  // namespace
}  // namespace kvault
