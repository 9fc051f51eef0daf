# Honest control: the transpose copied into a new tensor.
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x.t().contiguous()
