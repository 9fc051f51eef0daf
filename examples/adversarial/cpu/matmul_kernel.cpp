// Honest control under policy custom_kernel: C = A @ B (fp32) in its own loops; the
// only PyTorch operators it dispatches allocate (zeros) or copy (contiguous).
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.device().is_cpu() && b.device().is_cpu(), "matmul: CPU tensors expected");
  TORCH_CHECK(a.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32,
              "matmul: float32 expected");
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "matmul: bad shapes");
  const auto ac = a.contiguous();
  const auto bc = b.contiguous();
  const int64_t m = ac.size(0), k = ac.size(1), n = bc.size(1);
  auto out = torch::zeros({m, n}, ac.options());
  const float* pa = ac.data_ptr<float>();
  const float* pb = bc.data_ptr<float>();
  float* pc = out.data_ptr<float>();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) pc[i * n + j] += pa[i * k + p] * pb[p * n + j];
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "matmul (CPU)"); }
