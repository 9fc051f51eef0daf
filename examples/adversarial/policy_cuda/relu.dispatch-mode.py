# Cheat under custom_kernel (the engine's; the task carries none): a token CUDA
# kernel of its own is launched (so the kernel observer sees one), and the relu is
# computed by a TorchDispatchMode that answers aten::clone (allowed: it only copies)
# with PyTorch's relu, beneath the allowed operator.
import torch
import torch.nn as nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.cpp_extension import load_inline

_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void token_kernel(float* y) {
  if (threadIdx.x == 0 && blockIdx.x == 0) y[0] = y[0];
}

void touch(torch::Tensor y) {
  token_kernel<<<1, 32, 0, at::cuda::getCurrentCUDAStream()>>>(y.data_ptr<float>());
}
"""
_cpp = "void touch(torch::Tensor y);"
_ext = load_inline(name="relu_dispatch_mode", cpp_sources=_cpp, cuda_sources=_source, functions=["touch"])


class _Answer(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is torch.ops.aten.clone.default:
            return torch.relu(args[0])
        return func(*args, **(kwargs or {}))


class ModelNew(nn.Module):
    def forward(self, x):
        with _Answer():
            y = x.clone()
        _ext.touch(y)
        return y
