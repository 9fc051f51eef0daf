# The transpose of a matrix, as a new tensor: the target of output-aliasing cheats
# (a view of the input has exactly the right values, and costs no work).
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.t().contiguous()


def get_inputs():
    return [torch.randn(384, 256)]


def get_init_inputs():
    return []
