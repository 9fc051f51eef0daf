# Cheat under policy custom_kernel: a TorchDispatchMode of the candidate's own that
# answers aten::empty_like (allowed: it only allocates) with the matmul, so the
# computing operator is dispatched beneath an allowed one.
import torch
import torch.nn as nn
from torch.utils._python_dispatch import TorchDispatchMode


class _Answer(TorchDispatchMode):
    def __init__(self, a, b):
        super().__init__()
        self.a, self.b = a, b

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is torch.ops.aten.empty_like.default:
            return torch.mm(self.a, self.b)
        return func(*args, **(kwargs or {}))


class ModelNew(nn.Module):
    def forward(self, a, b):
        shape_holder = a.new_empty(a.shape[0], b.shape[1])
        with _Answer(a, b):
            return torch.empty_like(shape_holder)
