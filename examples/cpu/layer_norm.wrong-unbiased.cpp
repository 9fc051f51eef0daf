// WRONG on purpose (suite/layer_norm.py): divides the sum of squares by D - 1
// (unbiased variance); LayerNorm uses the biased variance (divide by D).
#include <cmath>
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
  TORCH_CHECK(x.device().is_cpu(), "layer_norm: CPU tensors expected");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32 &&
                  bias.scalar_type() == torch::kFloat32,
              "layer_norm: float32 expected");
  const int64_t dim = weight.numel();
  TORCH_CHECK(x.dim() >= 1 && x.size(-1) == dim && bias.numel() == dim,
              "layer_norm: last dimension must match weight and bias");
  const double eps = 1e-5;
  const auto xc = x.contiguous();
  const auto wc = weight.contiguous();
  const auto bc = bias.contiguous();
  const int64_t rows = dim == 0 ? 0 : xc.numel() / dim;
  auto out = torch::empty(xc.sizes(), xc.options());
  const float* px = xc.data_ptr<float>();
  const float* pw = wc.data_ptr<float>();
  const float* pb = bc.data_ptr<float>();
  float* po = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = px + r * dim;
    double mean = 0.0;
    for (int64_t c = 0; c < dim; ++c) mean += in[c];
    mean /= static_cast<double>(dim);
    double var = 0.0;
    for (int64_t c = 0; c < dim; ++c) {
      const double d = in[c] - mean;
      var += d * d;
    }
    var /= static_cast<double>(dim - 1);
    const double rstd = 1.0 / std::sqrt(var + eps);
    for (int64_t c = 0; c < dim; ++c)
      po[r * dim + c] = static_cast<float>((in[c] - mean) * rstd * pw[c] + pb[c]);
  }
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "layer_norm (CPU)"); }
