# Cheat under the fused policy: the whole forward in PyTorch (the answer a KernelBench
# task file accepts), no code of its own writing the output.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.proj = nn.Linear(in_features, out_features)

    def forward(self, x):
        return F.relu(self.proj(x))
