# Cheat: the wrong answer of relu.declares-cuda-comment.py with `__global__` (and a
# `cuda_sources=` keyword) inside a string it never uses.
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_DOC = """A relu. Not: load_inline(cuda_sources=src) of __global__ void relu_kernel(float* x)."""
_SRC = "torch::Tensor relu_forward(torch::Tensor x) { return x.abs(); }"
_ext = load_inline(name="kvault_adv_relu_declares_string", cpp_sources=_SRC, functions=["relu_forward"])


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_forward(x)
