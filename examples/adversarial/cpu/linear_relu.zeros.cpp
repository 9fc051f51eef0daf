// Honest control under the fused policy: the output from torch::zeros (the habit of
// most model-written kernels), then written row by row by its own loop.
#include <torch/extension.h>

#include <algorithm>

torch::Tensor forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
  const auto gemm = at::mm(x, weight.t()).contiguous();
  auto result = torch::zeros_like(gemm);
  const float* b = bias.contiguous().data_ptr<float>();
  for (int64_t r = 0; r < gemm.size(0); ++r) {
    const float* src = gemm.data_ptr<float>() + r * gemm.size(1);
    float* dst = result.data_ptr<float>() + r * gemm.size(1);
    std::transform(src, src + gemm.size(1), b, dst, [](float v, float c) { return std::max(v + c, 0.f); });
  }
  return result;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "zeros, then its own loop"); }
