"""Swap the last two dimensions of a bf16 tensor into a new contiguous tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.transpose(-1, -2).contiguous()


def get_inputs():
    return [torch.randn(4, 1024, 768, dtype=torch.bfloat16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"name": "default", "kind": "both", "get_inputs": get_inputs},
        {"name": "odd", "kind": "correctness",
         "get_inputs": lambda: [torch.randn(3, 999, 1001).bfloat16()]},
    ]
