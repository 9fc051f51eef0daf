# Honest control: a copy where the reference returns a view (the values are equal).
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x.t().contiguous()
