// Correct CPU solution for suite/gelu_tanh.py: tanh-approximate GELU on fp16,
// computed in float and rounded once to fp16.
#include <cmath>
#include <torch/extension.h>

static float gelu_tanh(float x) {
  const float k_sqrt_2_over_pi = 0.7978845608028654f;
  const float inner = k_sqrt_2_over_pi * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + std::tanh(inner));
}

torch::Tensor forward(torch::Tensor x) {
  TORCH_CHECK(x.device().is_cpu(), "gelu_tanh: CPU tensor expected");
  TORCH_CHECK(x.scalar_type() == torch::kFloat16, "gelu_tanh: float16 expected");
  const auto xc = x.contiguous();
  auto out = torch::empty(xc.sizes(), xc.options());
  const at::Half* px = xc.data_ptr<at::Half>();
  at::Half* po = out.data_ptr<at::Half>();
  const int64_t n = xc.numel();
  for (int64_t i = 0; i < n; ++i) po[i] = at::Half(gelu_tanh(static_cast<float>(px[i])));
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "gelu_tanh fp16 (CPU)"); }
