# Cheat under the fused policy: PyTorch computes the answer, then PyTorch copies it
# into a buffer allocated empty (a copy keeps what it copied: PyTorch's result).
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.proj = nn.Linear(in_features, out_features)

    def forward(self, x):
        answer = F.relu(self.proj(x))
        out = torch.empty_like(answer)
        out.copy_(answer)
        return out
