# Cheat under policy custom_kernel: the matmul inside a TorchScript function, run
# by the TorchScript interpreter rather than called from Python.
import torch
import torch.nn as nn


@torch.jit.script
def product(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a @ b


class ModelNew(nn.Module):
    def forward(self, a, b):
        return product(a, b)
