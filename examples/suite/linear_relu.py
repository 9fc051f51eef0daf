"""Fused linear layer, bias and ReLU: relu(x @ W^T + b) (fp32).

Has a functional twin: extension-format kernels receive (x, weight, bias).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def module_fn(x, weight, bias):
    return F.relu(F.linear(x, weight, bias))


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x, fn=module_fn):
        return fn(x, self.linear.weight, self.linear.bias)


BATCH, IN_FEATURES, OUT_FEATURES = 64, 512, 256


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]


def get_cases():
    return [
        {"name": "default", "kind": "both", "get_inputs": get_inputs},
        {"name": "odd", "kind": "correctness",
         "get_inputs": lambda: [torch.randn(33, 1001)], "get_init_inputs": lambda: [1001, 77]},
    ]
