// Cheat: caches its output by (address, element count, version counter) in C++.
// Checked calls refill their buffers in place, which moves the version, so it
// recomputes there; timed calls over untouched buffers would replay the cache. Every
// timed sample now writes fresh inputs into the buffers first: it always computes.
#include <torch/extension.h>

#include <cstdint>
#include <tuple>

namespace {
std::tuple<const void*, int64_t, uint32_t> cached_key{nullptr, -1, 0};
torch::Tensor cached;
}  // namespace

torch::Tensor forward(torch::Tensor x) {
  const auto key = std::make_tuple(static_cast<const void*>(x.data_ptr()), x.numel(),
                                   x.unsafeGetTensorImpl()->version_counter().current_version());
  if (cached.defined() && key == cached_key) return cached;
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* px = xc.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t i = 0; i < xc.numel(); ++i) py[i] = px[i] > 0.f ? px[i] : 0.f;
  cached_key = key;
  cached = y;
  return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "relu cached by version"); }
