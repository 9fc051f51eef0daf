"""KernelBench-format candidate for suite/relu.py written the way models write them
(C++ on the CPU: verbose=True, empty-string flags, the output from torch::zeros_like)
whose own code does not compile: a statement misses its semicolon. Its compile_error
must come from the lite compile's diagnostics, without a build against PyTorch's
headers (docs/toolchains.md, "Compile errors judged from the lite build").
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_cpp_source = """
#include <torch/extension.h>

torch::Tensor relu_cpu(torch::Tensor x) {
    auto out = torch::zeros_like(x);
    const float* px = x.data_ptr<float>();
    float* po = out.data_ptr<float>();
    int64_t size = x.numel()
    for (int64_t i = 0; i < size; ++i) {
        po[i] = px[i] > 0.0f ? px[i] : 0.0f;
    }
    return out;
}
"""

relu = load_inline(
    name="relu_cpu",
    cpp_sources=relu_cpp_source,
    functions=["relu_cpu"],
    verbose=True,
    extra_cflags=[""],
    extra_ldflags=[""],
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.relu = relu

    def forward(self, x):
        return self.relu.relu_cpu(x.contiguous())
