# Honest computation of a degenerate task (tasks/vanishing.py): its record is the
# task's error, like the cheat's beside it.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(-torch.abs(x)) + 1e-6 * torch.tanh(x)
