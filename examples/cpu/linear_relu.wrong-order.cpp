// WRONG on purpose (suite/linear_relu.py): applies the ReLU before adding the bias,
// relu(x W^T) + b instead of relu(x W^T + b).
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
  TORCH_CHECK(x.device().is_cpu(), "linear_relu: CPU tensors expected");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32 &&
                  bias.scalar_type() == torch::kFloat32,
              "linear_relu: float32 expected");
  TORCH_CHECK(x.dim() == 2 && weight.dim() == 2 && x.size(1) == weight.size(1) &&
                  bias.numel() == weight.size(0),
              "linear_relu: x [B, IN], weight [OUT, IN], bias [OUT] expected");
  const auto xc = x.contiguous();
  const auto wc = weight.contiguous();
  const auto bc = bias.contiguous();
  const int64_t batch = xc.size(0), in = xc.size(1), outs = wc.size(0);
  auto out = torch::empty({batch, outs}, xc.options());
  const float* px = xc.data_ptr<float>();
  const float* pw = wc.data_ptr<float>();
  const float* pb = bc.data_ptr<float>();
  float* po = out.data_ptr<float>();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t o = 0; o < outs; ++o) {
      double acc = 0.0;
      for (int64_t k = 0; k < in; ++k) acc += static_cast<double>(px[b * in + k]) * pw[o * in + k];
      po[b * outs + o] = (acc > 0.0 ? static_cast<float>(acc) : 0.0f) + pb[o];
    }
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "linear_relu (CPU)"); }
