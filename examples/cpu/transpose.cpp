// Correct CPU solution for suite/transpose.py: swap the last two dimensions of a bf16
// tensor into a new contiguous tensor (a pure copy, so the result is exact).
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor x) {
  TORCH_CHECK(x.device().is_cpu(), "transpose: CPU tensor expected");
  TORCH_CHECK(x.scalar_type() == torch::kBFloat16, "transpose: bfloat16 expected");
  TORCH_CHECK(x.dim() >= 2, "transpose: at least two dimensions expected");
  const auto xc = x.contiguous();
  const int64_t rows = xc.size(-2), cols = xc.size(-1);
  const int64_t batch = rows * cols == 0 ? 0 : xc.numel() / (rows * cols);
  auto out_sizes = xc.sizes().vec();
  std::swap(out_sizes[out_sizes.size() - 1], out_sizes[out_sizes.size() - 2]);
  auto out = torch::empty(out_sizes, xc.options());
  const at::BFloat16* px = xc.data_ptr<at::BFloat16>();
  at::BFloat16* po = out.data_ptr<at::BFloat16>();
  for (int64_t b = 0; b < batch; ++b) {
    const at::BFloat16* src = px + b * rows * cols;
    at::BFloat16* dst = po + b * rows * cols;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) dst[c * rows + r] = src[r * cols + c];
  }
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "transpose bf16 (CPU)"); }
