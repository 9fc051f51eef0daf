#include <torch/extension.h>

torch::Tensor relu_cpu(torch::Tensor x) {
    auto out = torch::zeros_like(x);
    const float* px = x.data_ptr<float>();
    float* po = out.data_ptr<float>();
    int64_t size = x.numel()
    for (int64_t i = 0; i < size; ++i) {
        po[i] = px[i] > 0.0f ? px[i] : 0.0f;
    }
    const char* s = "unterminated;
    return out;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
m.def("relu_cpu", torch::wrap_pybind_function(relu_cpu), "relu_cpu");
}
