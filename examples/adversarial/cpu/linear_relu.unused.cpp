// Cheat under the fused policy: its own loop runs and writes a scratch buffer nobody
// reads; the answer is ATen's (addmm, relu).
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
  auto scratch = torch::empty_like(bias);
  float* ps = scratch.data_ptr<float>();
  for (int64_t i = 0; i < scratch.numel(); ++i) ps[i] = static_cast<float>(i);
  return at::relu(at::addmm(bias, x, weight.t()));
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "own loop, result unused"); }
