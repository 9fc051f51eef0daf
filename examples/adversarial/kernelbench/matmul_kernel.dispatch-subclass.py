# Cheat under policy custom_kernel: the matmul nested inside an allowed operator. A
# tensor subclass whose __torch_dispatch__ answers aten::clone (allowed: it only
# copies) with torch.mm, so the computing operator runs beneath an allowed one and a
# check of the outermost operators only sees "clone".
import torch
import torch.nn as nn


class _Carrier(torch.Tensor):
    @staticmethod
    def __new__(cls, a, b):
        shape = (a.shape[0], b.shape[1])
        made = torch.Tensor._make_wrapper_subclass(cls, shape, dtype=a.dtype, device=a.device)
        made.pair = (a, b)
        return made

    __torch_function__ = torch._C._disabled_torch_function_impl

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        if func is torch.ops.aten.clone.default and isinstance(args[0], _Carrier):
            a, b = args[0].pair
            return torch.mm(a, b)
        raise NotImplementedError(str(func))


class ModelNew(nn.Module):
    def forward(self, a, b):
        return _Carrier(a, b).clone()
