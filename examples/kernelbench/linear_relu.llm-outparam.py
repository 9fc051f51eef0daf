"""KernelBench-format candidate for suite/linear_relu.py: nn.Linear kept for its
parameters, a fused x @ W^T + b then ReLU, the output torch::Tensor& passed in and
filled (void return), const torch::Tensor& inputs, accessor<float, 2>() and
accessor<float, 1>(), the function declared in cpp_sources and defined beside it.
The lite headers hold accessors: it must pass, built ahead the lite way.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

fused_src = """
#include <torch/extension.h>

void linear_relu_out(const torch::Tensor& x, const torch::Tensor& weight,
                     const torch::Tensor& bias, torch::Tensor& out) {
    auto xa = x.accessor<float, 2>();
    auto wa = weight.accessor<float, 2>();
    auto ba = bias.accessor<float, 1>();
    auto oa = out.accessor<float, 2>();
    const int64_t batch = xa.size(0);
    const int64_t in_f = xa.size(1);
    const int64_t out_f = wa.size(0);
    for (int64_t i = 0; i < batch; ++i) {
        for (int64_t j = 0; j < out_f; ++j) {
            float acc = ba[j];
            for (int64_t k = 0; k < in_f; ++k) {
                acc += xa[i][k] * wa[j][k];
            }
            oa[i][j] = acc > 0.0f ? acc : 0.0f;
        }
    }
}
"""

fused_decl = """
void linear_relu_out(const torch::Tensor& x, const torch::Tensor& weight,
                     const torch::Tensor& bias, torch::Tensor& out);
"""

fused = load_inline(
    name="linear_relu_fused",
    cpp_sources=[fused_decl, fused_src],
    functions=["linear_relu_out"],
    extra_cflags=["-O3", "-march=native"],
    verbose=True,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty(x.size(0), self.linear.out_features, dtype=x.dtype)
        fused.linear_relu_out(x, self.linear.weight.contiguous(), self.linear.bias, out)
        return out
