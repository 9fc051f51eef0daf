"""Elementwise sum of two fp32 tensors of the same shape."""
import torch
import torch.nn as nn

N = 1 << 22


class Model(nn.Module):
    def forward(self, a, b):
        return a + b


def get_inputs():
    return [torch.randn(N), torch.randn(N)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"name": "default", "kind": "both", "get_inputs": get_inputs},
        {"name": "odd", "kind": "correctness",
         "get_inputs": lambda: [torch.randn(1000, 1001), torch.randn(1000, 1001)]},
        {"name": "tiny", "kind": "correctness",
         "get_inputs": lambda: [torch.randn(7), torch.randn(7)]},
    ]
