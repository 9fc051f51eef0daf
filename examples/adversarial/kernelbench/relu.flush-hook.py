# Cheat: runs its own code inside the worker's flush (between the samples, where no
# clock looks) by replacing Tensor.fill_, which the flush calls: there it could warm
# the caches the flush just cleared, or do work for the next call. This one makes the
# flush of the big buffer a no-op and counts the calls it saw.
import torch
import torch.nn as nn

_fill = torch.Tensor.fill_
SEEN = []


def _hooked(self, value):
    if self.numel() >= (32 << 20):
        SEEN.append(self.numel())
        return self
    return _fill(self, value)


torch.Tensor.fill_ = _hooked


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
