// Correct CPU solution for suite/softmax.py: softmax over the last dimension (fp32).
#include <cmath>
#include <limits>
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor x) {
  TORCH_CHECK(x.device().is_cpu(), "softmax: CPU tensor expected");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "softmax: float32 expected");
  TORCH_CHECK(x.dim() >= 1, "softmax: at least one dimension expected");
  const auto xc = x.contiguous();
  const int64_t cols = xc.size(-1);
  const int64_t rows = cols == 0 ? 0 : xc.numel() / cols;
  auto out = torch::empty(xc.sizes(), xc.options());
  const float* px = xc.data_ptr<float>();
  float* po = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = px + r * cols;
    float* y = po + r * cols;
    float row_max = -std::numeric_limits<float>::infinity();
    for (int64_t c = 0; c < cols; ++c) row_max = std::max(row_max, in[c]);
    double denom = 0.0;
    for (int64_t c = 0; c < cols; ++c) denom += std::exp(static_cast<double>(in[c] - row_max));
    for (int64_t c = 0; c < cols; ++c)
      y[c] = static_cast<float>(std::exp(static_cast<double>(in[c] - row_max)) / denom);
  }
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "softmax (CPU)"); }
