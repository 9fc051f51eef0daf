# A tensor flattened into a new one-dimensional tensor: the target of `view` and
# `reshape` cheats (both return the input's own memory for a contiguous input).
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.flatten(x).clone()


def get_inputs():
    return [torch.randn(64, 48, 8)]


def get_init_inputs():
    return []
