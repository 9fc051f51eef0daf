// Honest control: returns input.t(), as the task's reference does.
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor x) { return x.t(); }

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "transpose as a view"); }
