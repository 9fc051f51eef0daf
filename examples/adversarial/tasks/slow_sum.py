# Row sums computed one row at a time (1024 small operations): a reference slow
# enough that a plain candidate is implausibly fast. The bound is lowered to 5 so
# that every such candidate is re-checked and, still above it, earns no speed term.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.stack([row.sum() for row in x])


def get_inputs():
    return [torch.randn(1024, 64)]


def get_init_inputs():
    return []


KVAULT_META = {"plausible_speedup": 5}
