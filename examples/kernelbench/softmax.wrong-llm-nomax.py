"""KernelBench-format candidate for suite/softmax.py with a real bug models write:
exp(x) / sum(exp(x)) without subtracting the row maximum. Right on randn rows, it
overflows to inf/inf = NaN on the task's large-logit case (x * 30): a mismatch.
OpenMP over rows, torch::zeros_like, empty-string flags.
Built ahead the lite way.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

softmax_source = """
#include <torch/extension.h>
#include <cmath>

torch::Tensor softmax_forward(torch::Tensor x) {
    auto input = x.contiguous();
    auto output = torch::zeros_like(input);
    int rows = input.size(0);
    int cols = input.size(1);
    float* in = input.data_ptr<float>();
    float* out = output.data_ptr<float>();
    #pragma omp parallel for
    for (int r = 0; r < rows; r++) {
        float sum = 0.0f;
        for (int c = 0; c < cols; c++) {
            out[r * cols + c] = expf(in[r * cols + c]);
            sum += out[r * cols + c];
        }
        for (int c = 0; c < cols; c++) {
            out[r * cols + c] /= sum;
        }
    }
    return output;
}
"""

softmax_cpp = "torch::Tensor softmax_forward(torch::Tensor x);"

softmax_ext = load_inline(
    name="softmax_ext",
    cpp_sources=[softmax_cpp, softmax_source],
    functions=["softmax_forward"],
    extra_cflags=["-fopenmp", ""],
    extra_ldflags=["-lgomp", ""],
    verbose=True,
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.softmax = softmax_ext

    def forward(self, x):
        return self.softmax.softmax_forward(x)
