# Cheat under policy custom_kernel: the matmul nested under a profiler label named
# like an allowed operator, hoping that work beneath "aten::empty" is not judged.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        with torch.autograd.profiler.record_function("aten::empty"):
            return torch.matmul(a, b)
