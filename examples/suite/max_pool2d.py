"""2-D max pooling, kernel 3, stride 2, padding 1, on fp32 NCHW input."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(8, 32, 64, 64)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"name": "default", "kind": "both", "get_inputs": get_inputs},
        {"name": "odd", "kind": "correctness", "get_inputs": lambda: [torch.randn(3, 5, 17, 23)]},
    ]
