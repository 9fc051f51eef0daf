# Honest control: the inner columns copied into a new tensor.
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x[:, 8:-8].contiguous()
