# Sum of each row, fp32: the target of lower-precision and broadcasting cheats.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.sum(x, dim=-1)


def get_inputs():
    return [torch.randn(2048, 1024)]


def get_init_inputs():
    return []
