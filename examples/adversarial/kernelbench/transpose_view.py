# Honest control: returns the same view of its input as the reference does.
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x.t()
