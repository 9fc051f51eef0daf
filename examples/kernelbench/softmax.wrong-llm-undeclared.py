"""KernelBench-format candidate for suite/softmax.py written the way models write them
(C++ on the CPU: verbose=True, -O3, torch::zeros outputs) whose own code does not
compile: a loop adds into a variable it never declared. Its compile_error must come
from the lite compile's diagnostics (the name looked up in PyTorch's preprocessed
headers, not compiled against them; docs/toolchains.md, "Compile errors judged from
the lite build").
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

softmax_cpp_source = """
#include <torch/extension.h>
#include <cmath>

torch::Tensor softmax_cpu(torch::Tensor input) {
    auto rows = input.size(0);
    auto cols = input.size(1);
    auto output = torch::zeros({rows, cols}, input.options());
    const float* in = input.data_ptr<float>();
    float* out = output.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        float max_val = -INFINITY;
        for (int64_t c = 0; c < cols; ++c) max_val = std::max(max_val, in[r * cols + c]);
        for (int64_t c = 0; c < cols; ++c) {
            out[r * cols + c] = std::exp(in[r * cols + c] - max_val);
            row_total += out[r * cols + c];
        }
        for (int64_t c = 0; c < cols; ++c) out[r * cols + c] /= row_total;
    }
    return output;
}
"""

softmax = load_inline(
    name="softmax_cpu",
    cpp_sources=softmax_cpp_source,
    functions=["softmax_cpu"],
    verbose=True,
    extra_cflags=["-O3"],
    extra_ldflags=[""],
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.softmax = softmax

    def forward(self, x):
        return self.softmax.softmax_cpu(x.contiguous())
