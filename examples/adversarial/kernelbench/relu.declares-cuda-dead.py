# Cheat: the wrong answer of relu.declares-cuda-comment.py with a load_inline call
# given `cuda_sources=` in code that never runs: the text test took a non-empty
# `cuda_sources=` anywhere for CUDA built inline (`unsupported` on cpu, no verdict).
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = "torch::Tensor relu_forward(torch::Tensor x) { return x.abs(); }"
_ext = load_inline(name="kvault_adv_relu_declares_dead", cpp_sources=_SRC, functions=["relu_forward"])

if False:
    _never = load_inline(name="kvault_adv_never", cpp_sources="", cuda_sources="__global__ void k() {}")


def _unused():
    return load_inline(name="kvault_adv_unused", cpp_sources="", cuda_sources=["__global__ void k() {}"])


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_forward(x)
