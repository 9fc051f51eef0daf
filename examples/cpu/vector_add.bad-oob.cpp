// BAD on purpose (suite/vector_add.py): computes a + b but writes each result 2^45
// floats (2^47 bytes) past the output, an address no user mapping can hold (it is not
// even canonical on x86-64): SIGSEGV, so the outcome is crash.
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor a, torch::Tensor b) {
  const auto ac = a.contiguous();
  const auto bc = b.contiguous();
  auto out = torch::empty(ac.sizes(), ac.options());
  const float* pa = ac.data_ptr<float>();
  const float* pb = bc.data_ptr<float>();
  volatile float* po = out.data_ptr<float>();  // volatile: every store is kept
  const int64_t n = ac.numel();
  const int64_t far = int64_t{1} << 45;
  for (int64_t i = 0; i < n; ++i) po[i + far] = pa[i] + pb[i];
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "vector_add (out of bounds)"); }
