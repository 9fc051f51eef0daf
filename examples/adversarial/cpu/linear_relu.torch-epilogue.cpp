// Cheat under the fused policy: its own loop adds the bias, then ATen's relu_ computes
// the output in place: PyTorch wrote what became the output.
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
  auto out = at::mm(x, weight.t()).contiguous();
  const auto b = bias.contiguous();
  float* po = out.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  const int64_t cols = out.size(1);
  for (int64_t i = 0; i < out.numel(); ++i) po[i] += pb[i % cols];
  return out.relu_();
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "relu left to ATen"); }
