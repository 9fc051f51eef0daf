"""KernelBench-format candidate for suite/layer_norm.py, pure PyTorch (runs on any backend).

ModelNew draws its weight and bias exactly as the reference Model does (same shapes,
same order of random calls), so under the harness's seeding both get the same values.
"""
import torch
import torch.nn as nn

EPS = 1e-5


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.5 * torch.randn(dim))
        self.bias = nn.Parameter(0.5 * torch.randn(dim))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        centred = x - mean
        var = (centred * centred).mean(dim=-1, keepdim=True)
        return centred * torch.rsqrt(var + EPS) * self.weight + self.bias
