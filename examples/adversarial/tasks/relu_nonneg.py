# relu whose own inputs are non-negative (torch.rand): on them relu is the identity,
# so an identity or abs passes every seed. The engine's other input distributions
# (signed, heavy-tailed; same shapes and dtypes) are what catch it.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.rand(512, 512)]


def get_init_inputs():
    return []
