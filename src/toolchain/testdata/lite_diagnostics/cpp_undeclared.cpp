#include <torch/extension.h>
#include <cmath>

torch::Tensor softmax_cpu(torch::Tensor input) {
    auto rows = input.size(0);
    auto cols = input.size(1);
    auto output = torch::zeros({rows, cols}, input.options());
    const float* in = input.data_ptr<float>();
    float* out = output.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
            out[r * cols + c] = std::exp(in[r * cols + c]);
            row_sum += out[r * cols + c];
        }
        for (int64_t c = 0; c < cols; ++c) out[r * cols + c] /= row_sum;
        idx_t k = 0;
        float v = FLT_MAX;
    }
    return output;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
m.def("softmax_cpu", torch::wrap_pybind_function(softmax_cpu), "softmax_cpu");
}
