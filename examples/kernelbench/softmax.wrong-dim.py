"""WRONG on purpose (suite/softmax.py), KernelBench format, pure PyTorch: softmax over
dim 0 instead of the last dimension; same shape, wrong values."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=0)
