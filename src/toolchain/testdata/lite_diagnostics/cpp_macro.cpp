#include <torch/extension.h>
torch::Tensor f(torch::Tensor a) {
    int UNKNOWN_ATTR y = 3;
    return a;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
m.def("f", torch::wrap_pybind_function(f), "f");
}
