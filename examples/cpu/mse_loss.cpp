// Correct CPU solution for suite/mse_loss.py: mean((pred - target)^2) as a 0-dim fp32
// tensor, accumulated in double.
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor pred, torch::Tensor target) {
  TORCH_CHECK(pred.device().is_cpu() && target.device().is_cpu(), "mse_loss: CPU tensors expected");
  TORCH_CHECK(pred.scalar_type() == torch::kFloat32 && target.scalar_type() == torch::kFloat32,
              "mse_loss: float32 expected");
  TORCH_CHECK(pred.sizes() == target.sizes(), "mse_loss: shapes differ");
  const auto pc = pred.contiguous();
  const auto tc = target.contiguous();
  const float* pp = pc.data_ptr<float>();
  const float* pt = tc.data_ptr<float>();
  const int64_t n = pc.numel();
  double acc = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(pp[i]) - pt[i];
    acc += d * d;
  }
  auto out = torch::empty({}, pc.options());  // 0-dim, like torch.mean
  out.data_ptr<float>()[0] = static_cast<float>(acc / static_cast<double>(n));
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "mse_loss (CPU)"); }
