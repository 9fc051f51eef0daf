"""A wrong functional twin of examples/suite/relu.py: negative inputs leak 1%."""
import torch.nn as nn
import torch.nn.functional as F


def module_fn(x):
    return F.leaky_relu(x, negative_slope=0.01)


class Model(nn.Module):
    def forward(self, x, fn=module_fn):
        return fn(x)
