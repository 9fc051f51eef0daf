// WRONG on purpose (suite/row_sum.py): the inner loop stops one column early, so the
// last column of every row is left out of its sum.
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor x) {
  TORCH_CHECK(x.device().is_cpu(), "row_sum: CPU tensor expected");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "row_sum: float32 expected");
  TORCH_CHECK(x.dim() >= 1, "row_sum: at least one dimension expected");
  const auto xc = x.contiguous();
  const int64_t cols = xc.size(-1);
  const int64_t rows = cols == 0 ? 0 : xc.numel() / cols;
  auto out_sizes = xc.sizes().vec();
  out_sizes.pop_back();
  auto out = torch::empty(out_sizes, xc.options());
  const float* px = xc.data_ptr<float>();
  float* po = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    double acc = 0.0;
    for (int64_t c = 0; c + 1 < cols; ++c) acc += px[r * cols + c];
    po[r] = static_cast<float>(acc);
  }
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "row_sum (CPU)"); }
