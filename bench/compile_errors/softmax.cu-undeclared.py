"""LLM-style KernelBench candidate for examples/suite/softmax.py (CUDA) that does not
compile: its kernel uses a column count it was never given."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

softmax_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void softmax_kernel(const float* input, float* output, int rows) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float max_val = -1e30f;
        for (int c = 0; c < num_cols; ++c) {
            max_val = fmaxf(max_val, input[row * num_cols + c]);
        }
        float sum = 0.0f;
        for (int c = 0; c < num_cols; ++c) {
            sum += expf(input[row * num_cols + c] - max_val);
        }
        for (int c = 0; c < num_cols; ++c) {
            output[row * num_cols + c] = expf(input[row * num_cols + c] - max_val) / sum;
        }
    }
}

torch::Tensor softmax_cuda(torch::Tensor input) {
    auto rows = input.size(0);
    auto output = torch::zeros({rows, input.size(1)}, input.options());

    const int block_size = 256;
    const int num_blocks = (rows + block_size - 1) / block_size;

    softmax_kernel<<<num_blocks, block_size>>>(input.data_ptr<float>(), output.data_ptr<float>(), rows);

    return output;
}
"""

softmax_cpp_source = "torch::Tensor softmax_cuda(torch::Tensor input);"

softmax = load_inline(
    name="softmax",
    cpp_sources=softmax_cpp_source,
    cuda_sources=softmax_source,
    functions=["softmax_cuda"],
    verbose=True,
    extra_cflags=[""],
    extra_ldflags=[""],
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.softmax = softmax

    def forward(self, x):
        return self.softmax.softmax_cuda(x)
