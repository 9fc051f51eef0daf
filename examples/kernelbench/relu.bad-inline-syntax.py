"""Broken KernelBench-format candidate for suite/relu.py: its inline C++ source does
not compile (a missing semicolon), so the build reports compile_error (CPU)."""
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_ext = load_inline(name="kvault_example_relu_syntax", functions=["relu_forward"], cpp_sources="""
torch::Tensor relu_forward(torch::Tensor x) {
  return x.clamp_min(0)
}
""")


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_forward(x)
