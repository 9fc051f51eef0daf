// Honest control under custom_kernel (the task carries no policy; the engine's
// --policy custom_kernel applies): relu in its own loop.
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor x) {
  TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat32, "relu: CPU float32 expected");
  const auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* px = xc.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t i = 0, n = xc.numel(); i < n; ++i) py[i] = px[i] > 0.f ? px[i] : 0.f;
  return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "relu (CPU)"); }
