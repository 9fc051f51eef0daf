#include "agent/splice.h"

#include <gtest/gtest.h>

namespace kvault::agent {
namespace {

const char* kBaseline = R"(#include <hip/hip_runtime.h>
// a comment mentioning __global__ void fake(int) { }
const char* s = "__global__ void in_string() {}";
__global__ void relu_kernel(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { y[i] = x[i] > 0 ? x[i] : 0; }
}
torch::Tensor forward(torch::Tensor x) {
  hipLaunchKernelGGL(relu_kernel, dim3(1), dim3(256), 0, 0, nullptr, nullptr, 0);
  return x;
}
)";

TEST(FindKernels, FindsDefinitionsOnlyOutsideCommentsAndStrings) {
  auto k = FindKernels(kBaseline);
  ASSERT_TRUE(k) << k.error();
  ASSERT_EQ(k->size(), 1u);
  EXPECT_EQ((*k)[0].name, "relu_kernel");
  const std::string text(kBaseline);
  EXPECT_EQ(text.substr((*k)[0].begin, 10), "__global__");
  EXPECT_EQ(text[(*k)[0].end - 1], '}');
  EXPECT_EQ(text.substr((*k)[0].end, 2), "\nt");
}

TEST(FindKernels, TemplatesAttributesAndDeclarations) {
  const std::string src =
      "__global__ void decl(int);\n"
      "template <typename T, int N>\n__global__ void __launch_bounds__(256) tk(T* p) { p[0] = N; }\n"
      "extern \"C\" __global__ void ck() {}\n";
  auto k = FindKernels(src);
  ASSERT_TRUE(k) << k.error();
  ASSERT_EQ(k->size(), 2u);
  EXPECT_EQ((*k)[0].name, "tk");
  EXPECT_EQ(src.substr((*k)[0].begin, 8), "template");
  EXPECT_EQ((*k)[1].name, "ck");
  EXPECT_EQ(src.substr((*k)[1].begin, 6), "extern");
}

TEST(FindKernels, UnbalancedBodyIsAnError) {
  EXPECT_FALSE(FindKernels("__global__ void k(int n) { if (n) {"));
}

TEST(SpliceKernel, ReplacesAndRenamesBack) {
  const std::string rewrite =
      "__device__ float relu1(float v) { return v > 0 ? v : 0; }\n"
      "__global__ void relu_fast(const float* x, float* y, int n) {\n"
      "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)"
      " y[i] = relu1(x[i]);\n}\n";
  auto out = SpliceKernel(kBaseline, rewrite);
  ASSERT_TRUE(out) << out.error();
  EXPECT_EQ(out->find("relu_fast"), std::string::npos);
  EXPECT_NE(out->find("__global__ void relu_kernel(const float* x, float* y, int n) {\n  for"),
            std::string::npos) << *out;
  EXPECT_NE(out->find("relu1(x[i])"), std::string::npos);
  EXPECT_EQ(out->find("if (i < n) { y[i]"), std::string::npos);  // the old body is gone
  EXPECT_NE(out->find("hipLaunchKernelGGL(relu_kernel"), std::string::npos);
  EXPECT_NE(out->find("in_string"), std::string::npos);  // the rest is untouched
}

TEST(SpliceKernel, SameNameReplacesThatKernelAmongSeveral) {
  const std::string base = "__global__ void a() { int x = 1; }\n__global__ void b() { int y = 2; }\n";
  auto out = SpliceKernel(base, "__global__ void b() { int y = 3; }");
  ASSERT_TRUE(out) << out.error();
  EXPECT_EQ(*out, "__global__ void a() { int x = 1; }\n__global__ void b() { int y = 3; }\n");
  auto renamed = SpliceKernel(base, "__global__ void c() {}");
  ASSERT_FALSE(renamed);
  EXPECT_NE(renamed.error().find("keep the name"), std::string::npos);
}

TEST(SpliceKernel, RewriteMustHoldExactlyOneKernel) {
  EXPECT_FALSE(SpliceKernel(kBaseline, "int x;"));
  EXPECT_FALSE(SpliceKernel(kBaseline, "__global__ void a() {}\n__global__ void b() {}"));
  EXPECT_FALSE(SpliceKernel("int main() {}", "__global__ void a() {}"));
}

TEST(RenameIdentifier, WholeWordsOnly) {
  EXPECT_EQ(RenameIdentifier("k(k_x, xk); // k", "k", "z"), "z(k_x, xk); // k");
}

}  // namespace
}  // namespace kvault::agent
