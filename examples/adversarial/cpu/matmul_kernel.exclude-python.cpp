// Cheat under policy custom_kernel: ATen's matmul with the Python dispatch keys
// excluded for the call (c10::impl::ExcludeDispatchKeyGuard), so that no Python
// dispatch mode sees it.
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor a, torch::Tensor b) {
  c10::impl::ExcludeDispatchKeyGuard no_python(
      c10::DispatchKeySet({c10::DispatchKey::Python, c10::DispatchKey::PythonTLSSnapshot}));
  return at::matmul(a, b);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "matmul, Python keys excluded"); }
