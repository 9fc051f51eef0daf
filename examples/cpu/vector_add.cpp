// Correct CPU solution for suite/vector_add.py: out = a + b (fp32).
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.device().is_cpu() && b.device().is_cpu(), "vector_add: CPU tensors expected");
  TORCH_CHECK(a.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32,
              "vector_add: float32 expected");
  TORCH_CHECK(a.sizes() == b.sizes(), "vector_add: shapes differ");
  const auto ac = a.contiguous();
  const auto bc = b.contiguous();
  auto out = torch::empty(ac.sizes(), ac.options());
  const float* pa = ac.data_ptr<float>();
  const float* pb = bc.data_ptr<float>();
  float* po = out.data_ptr<float>();
  const int64_t n = ac.numel();
  for (int64_t i = 0; i < n; ++i) po[i] = pa[i] + pb[i];
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "vector_add (CPU)"); }
