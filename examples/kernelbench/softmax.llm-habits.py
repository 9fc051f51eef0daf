"""KernelBench-format candidate for suite/softmax.py (CUDA) in the habits of
model-written files: one block per row on the legacy default stream, shared-memory
reductions, the output from torch::zeros with x.options(), sizes from size(), "-O3"
given twice, and a declaration in cpp_sources that repeats the definition's default
argument (PyTorch compiles the two apart; the engine's one unit must not see both).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

softmax_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <float.h>

__global__ void softmax_kernel(const float* input, float* output, int rows, int cols) {
    extern __shared__ float shared[];
    int row = blockIdx.x;
    int tid = threadIdx.x;
    const float* in_row = input + (long)row * cols;
    float* out_row = output + (long)row * cols;

    float max_val = -FLT_MAX;
    for (int i = tid; i < cols; i += blockDim.x) {
        max_val = fmaxf(max_val, in_row[i]);
    }
    shared[tid] = max_val;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) shared[tid] = fmaxf(shared[tid], shared[tid + s]);
        __syncthreads();
    }
    max_val = shared[0];
    __syncthreads();

    float sum = 0.0f;
    for (int i = tid; i < cols; i += blockDim.x) {
        sum += expf(in_row[i] - max_val);
    }
    shared[tid] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) shared[tid] += shared[tid + s];
        __syncthreads();
    }
    sum = shared[0];

    for (int i = tid; i < cols; i += blockDim.x) {
        out_row[i] = expf(in_row[i] - max_val) / sum;
    }
}

torch::Tensor softmax_cuda(torch::Tensor x, int threads = 256) {
    int rows = x.size(0);
    int cols = x.size(1);
    auto out = torch::zeros({rows, cols}, x.options());
    softmax_kernel<<<rows, threads, threads * sizeof(float)>>>(x.data_ptr<float>(), out.data_ptr<float>(), rows, cols);
    return out;
}
"""

softmax_cpp_source = "torch::Tensor softmax_cuda(torch::Tensor x, int threads = 256);"

softmax = load_inline(
    name="softmax",
    cpp_sources=softmax_cpp_source,
    cuda_sources=softmax_source,
    functions=["softmax_cuda"],
    verbose=True,
    extra_cuda_cflags=["-O3", "-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.softmax = softmax

    def forward(self, x):
        return self.softmax.softmax_cuda(x.contiguous(), 256)
