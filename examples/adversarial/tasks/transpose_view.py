# The transpose of a matrix where the reference itself returns a view of its input:
# a candidate returning the same view is honest here (the control of the aliasing
# check, which allows an aliased output only where the reference's aliases too).
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.t()


def get_inputs():
    return [torch.randn(384, 256)]


def get_init_inputs():
    return []
