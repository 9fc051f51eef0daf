"""Mean squared error of two fp32 matrices, reduced to a 0-dim scalar."""
import torch
import torch.nn as nn

ROWS, COLS = 1024, 1024


class Model(nn.Module):
    def forward(self, pred, target):
        return torch.mean((pred - target) ** 2)


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"name": "default", "kind": "both", "get_inputs": get_inputs},
        {"name": "odd", "kind": "correctness",
         "get_inputs": lambda: [torch.randn(999, 1001), torch.randn(999, 1001)]},
        {"name": "tiny", "kind": "correctness",
         "get_inputs": lambda: [torch.randn(3, 5), torch.randn(3, 5)]},
    ]
