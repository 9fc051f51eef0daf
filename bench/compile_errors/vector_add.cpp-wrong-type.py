"""LLM-style KernelBench candidate for examples/suite/vector_add.py (C++ on the CPU)
that does not compile: it writes through a pointer it declared const."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

vector_add_cpp_source = """
#include <torch/extension.h>

void add_loop(const float* a, const float* b, const float* out, int64_t size) {
    for (int64_t i = 0; i < size; ++i) {
        out[i] = a[i] + b[i];
    }
}

torch::Tensor vector_add_cpu(torch::Tensor a, torch::Tensor b) {
    auto out = torch::zeros_like(a);
    add_loop(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), a.numel());
    return out;
}
"""

vector_add = load_inline(
    name="vector_add_cpu",
    cpp_sources=vector_add_cpp_source,
    functions=["vector_add_cpu"],
    verbose=True,
    extra_cflags=[""],
    extra_ldflags=[""],
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.vector_add = vector_add

    def forward(self, a, b):
        return self.vector_add.vector_add_cpu(a.contiguous(), b.contiguous())
