// BAD on purpose (suite/relu.py): compiles and imports, but binds its function as
// "relu_forward" instead of "forward", so the outcome is load_error.
#include <torch/extension.h>

torch::Tensor relu_forward(torch::Tensor x) { return torch::relu(x); }

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("relu_forward", &relu_forward, "relu under the wrong name");
}
