# Honest control beside relu.fill-oom (memory/): PyTorch's relu (the task's policy is "any").
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
