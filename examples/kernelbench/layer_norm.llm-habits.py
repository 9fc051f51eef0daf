"""KernelBench-format candidate for suite/layer_norm.py in the habits of model-written
files: "-O3" given twice beside an empty entry, torch::zeros_like for the output,
sizes from size() and dim(), the declaration in cpp_sources and the definition beside
it. The weight and bias are drawn as the reference draws them. Built ahead by the
engine.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

layernorm_source = """
#include <torch/extension.h>
#include <cmath>

torch::Tensor layernorm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, float eps) {
    TORCH_CHECK(x.dim() == 2, "x must be 2D");
    x = x.contiguous();
    auto out = torch::zeros_like(x);
    int rows = x.size(0);
    int cols = x.size(1);
    const float* xp = x.data_ptr<float>();
    const float* wp = weight.data_ptr<float>();
    const float* bp = bias.data_ptr<float>();
    float* op = out.data_ptr<float>();
    for (int r = 0; r < rows; ++r) {
        const float* row = xp + (int64_t)r * cols;
        double mean = 0.0;
        for (int c = 0; c < cols; ++c) mean += row[c];
        mean /= cols;
        double var = 0.0;
        for (int c = 0; c < cols; ++c) { double d = row[c] - mean; var += d * d; }
        var /= cols;
        float inv = 1.0f / std::sqrt((float)var + eps);
        for (int c = 0; c < cols; ++c)
            op[(int64_t)r * cols + c] = ((row[c] - (float)mean) * inv) * wp[c] + bp[c];
    }
    return out;
}
"""

layernorm_cpp_source = "torch::Tensor layernorm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, float eps);"

layernorm = load_inline(
    name="layernorm",
    cpp_sources=[layernorm_cpp_source, layernorm_source],
    functions=["layernorm_forward"],
    verbose=True,
    extra_cflags=["-O3", "", "-O3"],
    extra_ldflags=[""],
)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super(ModelNew, self).__init__()
        self.weight = nn.Parameter(1.0 + 0.5 * torch.randn(dim))
        self.bias = nn.Parameter(0.5 * torch.randn(dim))
        self.layernorm = layernorm

    def forward(self, x):
        return self.layernorm.layernorm_forward(x, self.weight, self.bias, 1e-5)
