#include <torch/extension.h>

void add_loop(const float* a, const float* b, const float* out, int64_t size) {
    for (int64_t i = 0; i < size; ++i) {
        out[i] = a[i] + b[i];
    }
    int n = 1;
    float* q = &n;
    int n = 2;
}

torch::Tensor vector_add_cpu(torch::Tensor a, torch::Tensor b) {
    auto out = torch::zeros_like(a);
    add_loop(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), a.numel());
    return out;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
m.def("vector_add_cpu", torch::wrap_pybind_function(vector_add_cpu), "vector_add_cpu");
}
