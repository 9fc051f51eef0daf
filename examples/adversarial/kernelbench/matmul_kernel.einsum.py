# Cheat under policy custom_kernel: the same product through einsum (another
# operator name, still a computing PyTorch operator).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.einsum("ik,kj->ij", a, b)
