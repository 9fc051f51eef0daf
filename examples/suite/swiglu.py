"""SwiGLU gate on bf16: silu(gate) * up (computed in fp32, rounded once to bf16)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS, COLS = 2048, 1024


class Model(nn.Module):
    def forward(self, gate, up):
        # fp32 internal math: the bf16 SiLU of some CPU builds of PyTorch is off by
        # up to 2 bf16 steps, which would leave correct kernels at the edge of 1e-2.
        return (F.silu(gate.float()) * up.float()).to(gate.dtype)


def get_inputs():
    return [torch.randn(ROWS, COLS, dtype=torch.bfloat16),
            torch.randn(ROWS, COLS, dtype=torch.bfloat16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"name": "default", "kind": "both", "get_inputs": get_inputs},
        {"name": "odd", "kind": "correctness",
         "get_inputs": lambda: [(torch.randn(1000, 1001) * 4).bfloat16(),
                                torch.randn(1000, 1001).bfloat16()]},
    ]
