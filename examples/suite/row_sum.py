"""Sum over the last dimension of an fp32 matrix: [N, D] -> [N]."""
import torch
import torch.nn as nn

ROWS, COLS = 4096, 1024


class Model(nn.Module):
    def forward(self, x):
        return torch.sum(x, dim=-1)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"name": "default", "kind": "both", "get_inputs": get_inputs},
        {"name": "odd", "kind": "correctness", "get_inputs": lambda: [torch.randn(1000, 1001)]},
        {"name": "one_column", "kind": "correctness", "get_inputs": lambda: [torch.randn(513, 1)]},
    ]
