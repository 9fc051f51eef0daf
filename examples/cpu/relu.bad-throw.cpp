// BAD on purpose (suite/relu.py): raises a C++ exception (a failed TORCH_CHECK) on every
// call; PyTorch turns it into a Python RuntimeError, so the outcome is runtime_error.
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 42, "relu.bad-throw: expected a 42-dimensional input, got ", x.dim());
  return x;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "relu (always throws)"); }
