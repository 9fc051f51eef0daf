#include <torch/extension.h>
#include <map>
#include <string>

torch::Tensor f(torch::Tensor a, std::map<std::string, int> opts) {
    return a;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
m.def("f", torch::wrap_pybind_function(f), "f");
}
