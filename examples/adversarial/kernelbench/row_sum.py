# Honest control: torch.sum over the last dimension.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.sum(x, dim=-1)
