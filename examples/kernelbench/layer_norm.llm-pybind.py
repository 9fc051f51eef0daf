"""KernelBench-format candidate for suite/layer_norm.py: a PYBIND11_MODULE written by
hand (no functions=) with py::arg names and a default, c10::optional<torch::Tensor>
weight and bias, a double eps, const torch::Tensor& parameters, <vector> included,
load_inline called inside __init__.
The lite module takes py::arg annotations (keywords and defaults matched as pybind11
matches them): it must pass, built ahead the lite way.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

layer_norm_source = r"""
#include <torch/extension.h>
#include <vector>
#include <cmath>

torch::Tensor layer_norm_forward(const torch::Tensor& input,
                                 const c10::optional<torch::Tensor>& weight,
                                 const c10::optional<torch::Tensor>& bias,
                                 double eps) {
    auto x = input.contiguous();
    const int64_t n = x.size(-1);
    const int64_t rows = x.numel() / n;
    auto y = torch::empty_like(x);
    const float* xp = x.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    const float* wp = weight.has_value() ? weight->data_ptr<float>() : nullptr;
    const float* bp = bias.has_value() ? bias.value().data_ptr<float>() : nullptr;

    for (int64_t r = 0; r < rows; ++r) {
        const float* row = xp + r * n;
        float* out = yp + r * n;
        double mean = 0.0;
        for (int64_t i = 0; i < n; ++i) mean += row[i];
        mean /= n;
        double var = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            double d = row[i] - mean;
            var += d * d;
        }
        var /= n;
        const double rstd = 1.0 / std::sqrt(var + eps);
        for (int64_t i = 0; i < n; ++i) {
            double v = (row[i] - mean) * rstd;
            if (wp) v *= wp[i];
            if (bp) v += bp[i];
            out[i] = static_cast<float>(v);
        }
    }
    return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("forward", &layer_norm_forward, "LayerNorm forward (CPU)",
          py::arg("input"), py::arg("weight"), py::arg("bias"), py::arg("eps") = 1e-5);
}
"""


class ModelNew(nn.Module):
    def __init__(self, dim):
        super(ModelNew, self).__init__()
        self.weight = nn.Parameter(1.0 + 0.5 * torch.randn(dim))
        self.bias = nn.Parameter(0.5 * torch.randn(dim))
        self.eps = 1e-5
        self.layer_norm = load_inline(
            name="layer_norm_custom",
            cpp_sources=layer_norm_source,
            verbose=True,
        )

    def forward(self, x):
        return self.layer_norm.forward(x, self.weight, self.bias, self.eps)
