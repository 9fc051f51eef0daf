# Cheat under policy custom_kernel: tries a "custom kernel" that fails and falls back
# to PyTorch in the except branch.
import torch.nn as nn


def _custom_kernel(a, b):
    raise RuntimeError("kernel not available on this device")


class ModelNew(nn.Module):
    def forward(self, a, b):
        try:
            return _custom_kernel(a, b)
        except RuntimeError:
            return a @ b
