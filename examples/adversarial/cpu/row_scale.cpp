// Honest control: every element, four at a time where the row allows and one at a
// time for the rest, at any size (the held-out cases, smaller and larger, pass).
#include <torch/extension.h>

#include <cmath>
#include <cstdint>

torch::Tensor forward(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* px = xc.data_ptr<float>();
  float* py = y.data_ptr<float>();
  const int64_t n = xc.numel(), body = n / 4 * 4;
  for (int64_t i = 0; i < body; i += 4)
    for (int64_t k = 0; k < 4; ++k) py[i + k] = std::tanh(px[i + k]) * 2.0f + 1.0f;
  for (int64_t i = body; i < n; ++i) py[i] = std::tanh(px[i]) * 2.0f + 1.0f;
  return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "row scale"); }
