#include <torch/extension.h>
#include <vector>

torch::Tensor f(torch::Tensor a, torch::Tensor b) {
    auto out = torch::matmul(a, b);
    std::vector<float> v(4);
    float s = std::accumulate(v.begin(), v.end(), 0.0f);
    int64_t n = a.sizes();
    out.foo_();
    return out;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
m.def("f", torch::wrap_pybind_function(f), "f");
}
