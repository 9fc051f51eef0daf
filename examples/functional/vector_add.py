"""Functional twin of examples/suite/vector_add.py."""
import torch
import torch.nn as nn

N = 1 << 22


def module_fn(a, b):
    return torch.add(a, b)


class Model(nn.Module):
    def forward(self, a, b, fn=module_fn):
        return fn(a, b)


def get_inputs():
    return [torch.randn(N), torch.randn(N)]


def get_init_inputs():
    return []
