"""KernelBench-format candidate for suite/gelu_tanh.py (C++) in the habits of
model-written hybrid files: <torch/torch.h> instead of <torch/extension.h>, checks on
x.dtype() (compared with torch::kHalf, printed in the message, its itemsize()), the
work in float through x.to(torch::kFloat) and back through out.to(x.dtype()), a loop
of its own over rows whose length is a multiple of 4 and PyTorch's torch::gelu(xf,
"tanh") for the rest (the suite's odd case, 1001 columns, takes that way), the output
from torch::empty with TensorOptions().dtype(xf.dtype()).device(xf.device()).
It must pass and be built ahead the lite way.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = """
#include <torch/torch.h>
#include <cmath>

static inline float gelu_tanh_scalar(float v) {
    const float c = 0.7978845608028654f;  // sqrt(2 / pi)
    return 0.5f * v * (1.0f + std::tanh(c * (v + 0.044715f * v * v * v)));
}

torch::Tensor gelu_tanh_forward(torch::Tensor x) {
    TORCH_CHECK(x.dtype() == torch::kHalf || x.dtype() == torch::kFloat32,
                "gelu_tanh_forward: expected float16 or float32, got ", x.dtype());
    TORCH_CHECK(x.dtype().itemsize() <= 4, "gelu_tanh_forward: element too wide");
    auto xf = x.to(torch::kFloat).contiguous();
    const int64_t cols = xf.size(-1);
    if (cols % 4 != 0) {
        // Fallback for rows the unrolled loop does not cover.
        return torch::gelu(xf, "tanh").to(x.dtype());
    }
    auto out = torch::empty(xf.sizes(), torch::TensorOptions().dtype(xf.dtype()).device(xf.device()));
    const float* in = xf.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    const int64_t n = xf.numel();
    for (int64_t i = 0; i < n; i += 4) {
        dst[i] = gelu_tanh_scalar(in[i]);
        dst[i + 1] = gelu_tanh_scalar(in[i + 1]);
        dst[i + 2] = gelu_tanh_scalar(in[i + 2]);
        dst[i + 3] = gelu_tanh_scalar(in[i + 3]);
    }
    return out.to(x.dtype());
}
"""

gelu_ext = load_inline(
    name="gelu_tanh_torch_ops",
    cpp_sources=cpp_source,
    functions=["gelu_tanh_forward"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x):
        return gelu_ext.gelu_tanh_forward(x)
