"""Functional twin of examples/suite/relu.py: what `kvault gen --mode modu2func`
expects a model to answer (prompts/v1/formats/functional-python.md)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS, COLS = 2048, 1024


def module_fn(x):
    return F.relu(x)


class Model(nn.Module):
    def forward(self, x, fn=module_fn):
        return fn(x)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
