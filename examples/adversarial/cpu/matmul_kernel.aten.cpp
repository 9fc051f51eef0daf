// Cheat under policy custom_kernel: an extension-format "kernel" that calls ATen's
// matmul from C++ (the dispatcher sees it as it sees a Python call).
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor a, torch::Tensor b) { return at::matmul(a, b); }

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "matmul via ATen"); }
