"""KernelBench-format candidate for suite/max_pool2d.py (C++) in the habits of
model-written hybrid files: a loop of its own for even heights and widths, PyTorch's
torch::max_pool2d(x, {3, 3}, {2, 2}, {1, 1}) for the rest (the suite's odd case,
17 x 23, takes that way), the window's maximum seeded from
-std::numeric_limits<float>::infinity(), the output from torch::empty given
x.dtype() for its options, a check that x.dtype() is torch::kFloat32.
It must pass and be built ahead the lite way.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = """
#include <torch/extension.h>
#include <limits>

torch::Tensor max_pool2d_forward(torch::Tensor x) {
    TORCH_CHECK(x.dim() == 4, "max_pool2d_forward: NCHW input expected");
    TORCH_CHECK(x.dtype() == torch::kFloat32, "max_pool2d_forward: float32 expected, got ", x.dtype());
    const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
    if (H % 2 != 0 || W % 2 != 0) {
        return torch::max_pool2d(x, {3, 3}, {2, 2}, {1, 1});
    }
    auto input = x.contiguous();
    const int64_t OH = (H + 2 - 3) / 2 + 1;
    const int64_t OW = (W + 2 - 3) / 2 + 1;
    auto out = torch::empty({N, C, OH, OW}, x.dtype());
    const float* in = input.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    for (int64_t plane = 0; plane < N * C; ++plane) {
        const float* src = in + plane * H * W;
        for (int64_t oh = 0; oh < OH; ++oh) {
            for (int64_t ow = 0; ow < OW; ++ow) {
                float best = -std::numeric_limits<float>::infinity();
                for (int64_t kh = 0; kh < 3; ++kh) {
                    const int64_t ih = oh * 2 - 1 + kh;
                    if (ih < 0 || ih >= H) continue;
                    for (int64_t kw = 0; kw < 3; ++kw) {
                        const int64_t iw = ow * 2 - 1 + kw;
                        if (iw < 0 || iw >= W) continue;
                        best = src[ih * W + iw] > best ? src[ih * W + iw] : best;
                    }
                }
                dst[(plane * OH + oh) * OW + ow] = best;
            }
        }
    }
    return out;
}
"""

pool_ext = load_inline(
    name="max_pool2d_torch_ops",
    cpp_sources=cpp_source,
    functions=["max_pool2d_forward"],
    extra_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x):
        return pool_ext.max_pool2d_forward(x)
