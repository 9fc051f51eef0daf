# Cheat under policy custom_kernel: an operator of its own namespace (torch.library)
# whose implementation is PyTorch's matmul: the outermost operator the trace sees is
# not one of PyTorch's, the matmul is nested beneath it.
import torch
import torch.nn as nn

_lib = torch.library.Library("kvadv", "DEF")
_lib.define("product(Tensor a, Tensor b) -> Tensor")
_lib.impl("product", lambda a, b: torch.matmul(a, b), "CompositeExplicitAutograd")


class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.ops.kvadv.product(a, b)
