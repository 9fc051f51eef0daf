"""KernelBench-format candidate for suite/softmax.py (C++) in the habits of
model-written files trained on older PyTorch extensions: the deprecated x.type()
checked with is_cuda() and passed to AT_DISPATCH_FLOATING_TYPES, raw pointers through
the deprecated .data<scalar_t>(), TORCH_CHECK_VALUE on the shape, the output from
torch::empty_like(x, x.options()), a std::vector<double> parameter and a
std::pair<torch::Tensor, int64_t> result (the output and the rows it saw).
It must pass and be built ahead the lite way.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = """
#include <torch/extension.h>
#include <cmath>
#include <vector>
#include <utility>

template <typename scalar_t>
void softmax_rows(const scalar_t* in, scalar_t* out, int64_t rows, int64_t cols, double inv_temp) {
    for (int64_t r = 0; r < rows; ++r) {
        const scalar_t* row = in + r * cols;
        scalar_t* dst = out + r * cols;
        scalar_t m = row[0];
        for (int64_t c = 1; c < cols; ++c) m = row[c] > m ? row[c] : m;
        double total = 0.0;
        for (int64_t c = 0; c < cols; ++c) {
            double e = std::exp((static_cast<double>(row[c]) - m) * inv_temp);
            dst[c] = static_cast<scalar_t>(e);
            total += e;
        }
        for (int64_t c = 0; c < cols; ++c) dst[c] = static_cast<scalar_t>(dst[c] / total);
    }
}

std::pair<torch::Tensor, int64_t> softmax_forward(torch::Tensor x, std::vector<double> temperature) {
    TORCH_CHECK(!x.type().is_cuda(), "x must be a CPU tensor");
    TORCH_CHECK_VALUE(x.dim() == 2, "x must be 2D, got ", x.dim(), "D");
    TORCH_CHECK_VALUE(temperature.size() == 1 && temperature[0] > 0, "one positive temperature expected");
    auto input = x.contiguous();
    auto output = torch::empty_like(input, input.options());
    const int64_t rows = input.size(0);
    const int64_t cols = input.size(1);
    AT_DISPATCH_FLOATING_TYPES(input.type(), "softmax_forward", ([&] {
        softmax_rows<scalar_t>(input.data<scalar_t>(), output.data<scalar_t>(), rows, cols, 1.0 / temperature[0]);
    }));
    return std::make_pair(output, rows);
}
"""

softmax_ext = load_inline(
    name="softmax_deprecated",
    cpp_sources=cpp_source,
    functions=["softmax_forward"],
    extra_cflags=["-O3", ""],
    verbose=True,
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x):
        out, rows = softmax_ext.softmax_forward(x, [1.0])
        assert rows == x.shape[0]
        return out
