# Honest control: works at any size, so it passes the held-out case too.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.tanh(x).mul_(2.0).add_(1.0)
