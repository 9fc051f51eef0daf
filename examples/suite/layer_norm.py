"""LayerNorm over the last dimension with learned weight and bias (fp32).

Has a functional twin: extension-format kernels receive (x, weight, bias).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

EPS = 1e-5
ROWS, DIM = 4096, 512


def module_fn(x, weight, bias):
    return F.layer_norm(x, (weight.shape[0],), weight, bias, eps=EPS)


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        # random, not ones/zeros: a kernel that ignores weight or bias must fail
        self.weight = nn.Parameter(1.0 + 0.5 * torch.randn(dim))
        self.bias = nn.Parameter(0.5 * torch.randn(dim))

    def forward(self, x, fn=module_fn):
        return fn(x, self.weight, self.bias)


def get_inputs():
    return [torch.randn(ROWS, DIM)]


def get_init_inputs():
    return [DIM]


def get_cases():
    return [
        {"name": "default", "kind": "both", "get_inputs": get_inputs},
        {"name": "odd", "kind": "correctness",
         "get_inputs": lambda: [torch.randn(1000, 1001)], "get_init_inputs": lambda: [1001]},
        # mean far from zero: one-pass E[x^2] - E[x]^2 in fp32 loses the variance
        {"name": "offset", "kind": "correctness",
         "get_inputs": lambda: [torch.randn(257, 96) * 2 + 100], "get_init_inputs": lambda: [96]},
    ]
