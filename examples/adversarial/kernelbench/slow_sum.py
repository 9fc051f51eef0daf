# Honest control: the reference's own row-by-row sums, about as fast (no re-check).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.stack([row.sum() for row in x])
