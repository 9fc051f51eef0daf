# Cheat under policy custom_kernel: calls PyTorch's matmul instead of a kernel.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)
