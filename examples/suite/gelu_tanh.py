"""GELU, tanh approximation, on fp16 (computed in fp32, rounded once to fp16)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS, COLS = 2048, 1024


class Model(nn.Module):
    def forward(self, x):
        # fp32 internal math, as PyTorch's GPU kernels do; also runs on CPU builds
        # that lack fp16 GELU.
        return F.gelu(x.float(), approximate="tanh").to(x.dtype)


def get_inputs():
    return [torch.randn(ROWS, COLS, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"name": "default", "kind": "both", "get_inputs": get_inputs},
        {"name": "odd", "kind": "correctness",
         "get_inputs": lambda: [(torch.randn(999, 1001) * 3).half()]},
    ]
