"""KernelBench-format candidate for suite/layer_norm.py (CUDA) in the habits of
model-written hybrid files: <torch/torch.h> instead of <torch/extension.h>, a kernel of
one block per row (two passes over the row in shared memory sums, the mean first) for
float32, PyTorch's torch::layer_norm for any other dtype (in float through
x.to(torch::kFloat), back through .to(x.dtype())), checks on x.dtype() printed in
their message and its itemsize(), the output from torch::empty with
TensorOptions().dtype(x.dtype()).device(x.device()), a device guard and the current
stream.
It must pass and be built ahead the lite way (CI compiles it: --compile-only,
tests/integration/test_inline_cuda_compile_only.sh).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/torch.h>
#include <c10/cuda/CUDAGuard.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

constexpr int kThreads = 256;

__device__ float block_sum(float v, float* shared) {
    shared[threadIdx.x] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) shared[threadIdx.x] += shared[threadIdx.x + s];
        __syncthreads();
    }
    float total = shared[0];
    __syncthreads();
    return total;
}

__global__ void layer_norm_rows(const float* __restrict__ x, const float* __restrict__ w,
                                const float* __restrict__ b, float* __restrict__ out, int cols, float eps) {
    __shared__ float shared[kThreads];
    const float* row = x + (int64_t)blockIdx.x * cols;
    float* dst = out + (int64_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += row[c];
    const float mean = block_sum(s, shared) / cols;
    float sq = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float d = row[c] - mean;
        sq += d * d;
    }
    const float inv = rsqrtf(block_sum(sq, shared) / cols + eps);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) dst[c] = (row[c] - mean) * inv * w[c] + b[c];
}

torch::Tensor layer_norm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
    TORCH_CHECK(x.is_cuda(), "layer_norm_forward: x must be a CUDA tensor");
    TORCH_CHECK(x.dtype() == weight.dtype() && x.dtype() == bias.dtype(),
                "layer_norm_forward: x is ", x.dtype(), ", weight ", weight.dtype(), ", bias ", bias.dtype());
    TORCH_CHECK(x.dtype().itemsize() <= 4, "layer_norm_forward: 64-bit types are not supported");
    const int64_t cols = x.size(-1);
    if (x.dtype() != torch::kFloat32) {
        return torch::layer_norm(x.to(torch::kFloat), {cols}, weight.to(torch::kFloat), bias.to(torch::kFloat), eps)
            .to(x.dtype());
    }
    const at::cuda::CUDAGuard guard(x.device());
    auto xc = x.contiguous();
    auto w = weight.contiguous();
    auto b = bias.contiguous();
    auto out = torch::empty(xc.sizes(), torch::TensorOptions().dtype(x.dtype()).device(x.device()));
    const int64_t rows = xc.numel() / cols;
    layer_norm_rows<<<rows, kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), (int)cols, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor layer_norm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps);"

layer_norm_ext = load_inline(
    name="layer_norm_cuda_torch_ops",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["layer_norm_forward"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super(ModelNew, self).__init__()
        self.weight = nn.Parameter(1.0 + 0.5 * torch.randn(dim))
        self.bias = nn.Parameter(0.5 * torch.randn(dim))

    def forward(self, x):
        return layer_norm_ext.layer_norm_forward(x, self.weight, self.bias, 1e-5)
