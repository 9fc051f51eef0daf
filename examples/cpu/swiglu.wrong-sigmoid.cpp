// WRONG on purpose (suite/swiglu.py): uses sigmoid(gate) * up, forgetting that
// silu(g) = g * sigmoid(g).
#include <cmath>
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor gate, torch::Tensor up) {
  TORCH_CHECK(gate.device().is_cpu() && up.device().is_cpu(), "swiglu: CPU tensors expected");
  TORCH_CHECK(gate.scalar_type() == torch::kBFloat16 && up.scalar_type() == torch::kBFloat16,
              "swiglu: bfloat16 expected");
  TORCH_CHECK(gate.sizes() == up.sizes(), "swiglu: shapes differ");
  const auto gc = gate.contiguous();
  const auto uc = up.contiguous();
  auto out = torch::empty(gc.sizes(), gc.options());
  const at::BFloat16* pg = gc.data_ptr<at::BFloat16>();
  const at::BFloat16* pu = uc.data_ptr<at::BFloat16>();
  at::BFloat16* po = out.data_ptr<at::BFloat16>();
  const int64_t n = gc.numel();
  for (int64_t i = 0; i < n; ++i) {
    const float g = static_cast<float>(pg[i]);
    const float silu = 1.0f / (1.0f + std::exp(-g));  // BUG: missing factor g
    po[i] = at::BFloat16(silu * static_cast<float>(pu[i]));
  }
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "swiglu bf16 (CPU)"); }
