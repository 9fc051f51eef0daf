"""KernelBench-format candidate for suite/softmax.py: at::parallel_for over rows with
<ATen/Parallel.h>, accessor<float, 2>() views, std::exp/std::max from <cmath> and
<algorithm>, torch::empty({rows, cols}, x.options()), TORCH_CHECK on the input.
The lite headers hold at::parallel_for and accessors: it must pass, built ahead the
lite way.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

softmax_cpp = """
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>
#include <algorithm>

torch::Tensor softmax_cpu(torch::Tensor x) {
    TORCH_CHECK(x.dim() == 2, "input must be 2D");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "input must be float32");
    x = x.contiguous();
    const int64_t rows = x.size(0);
    const int64_t cols = x.size(1);
    auto out = torch::empty({rows, cols}, x.options());
    auto in_a = x.accessor<float, 2>();
    auto out_a = out.accessor<float, 2>();

    at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            float max_val = -std::numeric_limits<float>::infinity();
            for (int64_t c = 0; c < cols; ++c) {
                max_val = std::max(max_val, in_a[r][c]);
            }
            float sum = 0.0f;
            for (int64_t c = 0; c < cols; ++c) {
                float e = std::exp(in_a[r][c] - max_val);
                out_a[r][c] = e;
                sum += e;
            }
            float inv = 1.0f / sum;
            for (int64_t c = 0; c < cols; ++c) {
                out_a[r][c] *= inv;
            }
        }
    });
    return out;
}
"""

softmax_decl = "torch::Tensor softmax_cpu(torch::Tensor x);"

softmax_ext = load_inline(
    name="softmax_parallel",
    cpp_sources=[softmax_decl, softmax_cpp],
    functions=["softmax_cpu"],
    extra_cflags=["-O3"],
    verbose=True,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return softmax_ext.softmax_cpu(x)
