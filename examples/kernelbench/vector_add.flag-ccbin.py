"""A cheat for suite/vector_add.py: a correct CUDA kernel whose extra_cuda_cflags ask
nvcc to use a host compiler of the candidate's choosing (-ccbin), which would run it
where the engine builds the call. Off nvcc's allow-list: the candidate's
compile_error naming the flag.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>

__global__ void add_kernel(const float* a, const float* b, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b) {
    auto out = torch::zeros_like(a);
    int n = a.numel();
    add_kernel<<<(n + 255) / 256, 256>>>(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""

add = load_inline(
    name="add",
    cpp_sources="torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b);",
    cuda_sources=source,
    functions=["add_cuda"],
    verbose=True,
    extra_cuda_cflags=["-O3", "-ccbin", "/tmp/kvault-not-a-compiler"],
)


class ModelNew(nn.Module):
    def forward(self, a, b):
        return add.add_cuda(a.contiguous(), b.contiguous())
