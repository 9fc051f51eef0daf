// WRONG on purpose (suite/relu.py): returns |x| instead of max(x, 0).
// Agrees with ReLU on non-negative inputs only; the task's signed inputs expose it.
#include <cmath>
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor x) {
  TORCH_CHECK(x.device().is_cpu(), "relu: CPU tensor expected");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "relu: float32 expected");
  const auto xc = x.contiguous();
  auto out = torch::empty(xc.sizes(), xc.options());
  const float* px = xc.data_ptr<float>();
  float* po = out.data_ptr<float>();
  const int64_t n = xc.numel();
  for (int64_t i = 0; i < n; ++i) po[i] = std::fabs(px[i]);
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "relu (CPU)"); }
