# a @ b where the candidate must compute with its own kernel (policy custom_kernel):
# a forward that dispatches PyTorch's matmul, einsum, the reference Model or any
# other computing operator is a policy_violation, even when its output is right.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(96, 128), torch.randn(128, 80)]


def get_init_inputs():
    return []


KVAULT_META = {"policy": "custom_kernel", "rtol": 1e-3, "atol": 1e-3}
