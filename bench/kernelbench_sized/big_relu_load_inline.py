"""KernelBench-format candidate for big_relu.py (the load_inline baseline): the same
grid-stride ReLU as big_relu.cu, compiled with load_inline when imported."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void relu1(const float* x, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = fmaxf(x[i], 0.f);
}

torch::Tensor forward(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.is_contiguous(), "float32 CUDA");
  auto y = torch::empty_like(x);
  relu1<<<132 * 8, 256, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
  return y;
}
"""

_ext = load_inline(name="kvb_big_relu", cpp_sources="torch::Tensor forward(torch::Tensor x);",
                   cuda_sources=_SOURCE, functions=["forward"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.forward(x)
