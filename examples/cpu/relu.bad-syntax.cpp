// BAD on purpose (suite/relu.py): does not compile (a missing semicolon and an
// undeclared name), so the outcome is compile_error.
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor x) {
  auto out = torch::empty_like(x)
  return undeclared_function(out);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "relu (does not compile)"); }
