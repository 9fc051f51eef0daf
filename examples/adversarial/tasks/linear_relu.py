# relu(x @ W^T + b) under the `fused` policy (KernelBench's norm for level 2 and 3):
# PyTorch may compute the GEMM (cuBLAS), but what becomes the output must be written
# by the candidate's own code (the bias and relu fused in a kernel of its own); on a
# GPU a kernel of its own must be seen to launch. A forward computed by PyTorch alone,
# an epilogue left to PyTorch, or a kernel whose result is unused is a
# policy_violation.
import torch
import torch.nn as nn

KVAULT_META = {"policy": "fused", "rtol": 1e-4, "atol": 1e-4}


class Model(nn.Module):
    """No functional twin: extension-format candidates get (x, weight, bias), the
    parameters in named_parameters() order."""

    def __init__(self, features_in, features_out):
        super().__init__()
        self.proj = nn.Linear(features_in, features_out)

    def forward(self, x):
        return torch.relu(self.proj(x))


def get_inputs():
    return [torch.randn(64, 256)]


def get_init_inputs():
    return [256, 128]
