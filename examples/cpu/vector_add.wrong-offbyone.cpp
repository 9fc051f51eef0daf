// WRONG on purpose (suite/vector_add.py): the loop stops at n - 1, so the last
// element keeps the 0 it was allocated with.
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.device().is_cpu() && b.device().is_cpu(), "vector_add: CPU tensors expected");
  TORCH_CHECK(a.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32,
              "vector_add: float32 expected");
  TORCH_CHECK(a.sizes() == b.sizes(), "vector_add: shapes differ");
  const auto ac = a.contiguous();
  const auto bc = b.contiguous();
  auto out = torch::zeros(ac.sizes(), ac.options());
  const float* pa = ac.data_ptr<float>();
  const float* pb = bc.data_ptr<float>();
  float* po = out.data_ptr<float>();
  const int64_t n = ac.numel();
  for (int64_t i = 0; i < n - 1; ++i) po[i] = pa[i] + pb[i];
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "vector_add (CPU)"); }
