"""Functional twin of examples/suite/linear_relu.py, whose parameters module_fn takes:
the twin creates them as the task does (one nn.Linear, so the same seed gives the same
values) and passes them in."""
import torch
import torch.nn as nn

BATCH, IN_FEATURES, OUT_FEATURES = 64, 512, 256


def module_fn(x, weight, bias):
    return torch.clamp_min(torch.addmm(bias, x, weight.t()), 0.0)


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x, fn=module_fn):
        return fn(x, self.linear.weight, self.linear.bias)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
