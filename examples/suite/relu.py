"""ReLU on a signed fp32 matrix."""
import torch
import torch.nn as nn

ROWS, COLS = 2048, 1024


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"name": "default", "kind": "both", "get_inputs": get_inputs},
        {"name": "odd", "kind": "correctness", "get_inputs": lambda: [torch.randn(1000, 1001)]},
        {"name": "scaled", "kind": "correctness", "get_inputs": lambda: [torch.randn(4099) * 100]},
    ]
