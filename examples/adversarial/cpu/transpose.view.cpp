// Cheat: a C++ extension that returns input.t(), a view of its input.
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor x) { return x.t(); }

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "transpose as a view"); }
