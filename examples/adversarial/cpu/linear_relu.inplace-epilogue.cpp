// Honest, but refused under the fused policy (a known limit, docs/adversarial.md):
// the bias and relu written by its own loop in place into the result of ATen's GEMM.
// The operator trace sees at::mm write the output last; the loop's writes dispatch
// nothing, so the output counts as PyTorch's.
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
  auto y = at::mm(x, weight.t()).contiguous();
  const float* pb = bias.contiguous().data_ptr<float>();
  float* py = y.data_ptr<float>();
  const int64_t cols = y.size(1);
  for (int64_t i = 0; i < y.numel(); ++i) {
    const float v = py[i] + pb[i % cols];
    py[i] = v > 0.f ? v : 0.f;
  }
  return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "in-place epilogue on ATen's GEMM"); }
