# Honest control: the flattened tensor as a new tensor.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.flatten(x).clone()
