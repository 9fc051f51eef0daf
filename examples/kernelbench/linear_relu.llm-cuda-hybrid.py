"""KernelBench-format candidate for suite/linear_relu.py (CUDA) in the habits of
model-written hybrid solutions: the GEMM left to PyTorch (torch::matmul with
weight.t()), the bias and ReLU in a kernel of its own templated on scalar_t and
dispatched on the deprecated x.type(), raw pointers through the deprecated
.data<scalar_t>(), a CHECK macro on x.type().is_cuda(), the output from
torch::empty_like(y, y.options()), the kernel on PyTorch's current stream (where
torch::matmul wrote y), -O3 given twice, verbose=True.
It must pass and be built ahead the lite way (CI compiles it: --compile-only,
tests/integration/test_inline_cuda_compile_only.sh).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

#define CHECK_CUDA(x) TORCH_CHECK(x.type().is_cuda(), #x " must be a CUDA tensor")
#define CHECK_CONTIGUOUS(x) TORCH_CHECK(x.is_contiguous(), #x " must be contiguous")

template <typename scalar_t>
__global__ void bias_relu_kernel(const scalar_t* __restrict__ y, const scalar_t* __restrict__ bias,
                                 scalar_t* __restrict__ out, int64_t rows, int64_t cols) {
    int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (idx < rows * cols) {
        scalar_t v = y[idx] + bias[idx % cols];
        out[idx] = v > scalar_t(0) ? v : scalar_t(0);
    }
}

torch::Tensor linear_relu_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
    CHECK_CUDA(x);
    CHECK_CUDA(weight);
    TORCH_CHECK(x.dim() == 2, "x must be 2D, got ", x.dim(), "D");
    auto y = torch::matmul(x.contiguous(), weight.t()).contiguous();
    auto b = bias.contiguous();
    CHECK_CONTIGUOUS(b);
    auto out = torch::empty_like(y, y.options());
    const int64_t rows = y.size(0);
    const int64_t cols = y.size(1);
    const int threads = 256;
    const int blocks = (rows * cols + threads - 1) / threads;
    AT_DISPATCH_FLOATING_TYPES(y.type(), "bias_relu_kernel", ([&] {
        bias_relu_kernel<scalar_t><<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
            y.data<scalar_t>(), b.data<scalar_t>(), out.data<scalar_t>(), rows, cols);
    }));
    return out;
}
"""

cpp_source = "torch::Tensor linear_relu_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias);"

linear_relu = load_inline(
    name="linear_relu_hybrid",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["linear_relu_forward"],
    verbose=True,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3", "-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return linear_relu.linear_relu_forward(x, self.linear.weight, self.linear.bias)
