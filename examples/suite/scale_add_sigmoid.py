"""Fused sigmoid(x * 2.5 + y) on fp16 (computed in fp32, rounded once to fp16)."""
import torch
import torch.nn as nn

SCALE = 2.5
ROWS, COLS = 2048, 1024


class Model(nn.Module):
    def forward(self, x, y):
        return torch.sigmoid(x.float() * SCALE + y.float()).to(x.dtype)


def get_inputs():
    return [torch.randn(ROWS, COLS, dtype=torch.float16),
            torch.randn(ROWS, COLS, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"name": "default", "kind": "both", "get_inputs": get_inputs},
        {"name": "odd", "kind": "correctness",
         "get_inputs": lambda: [torch.randn(1000, 1001).half(), torch.randn(1000, 1001).half()]},
    ]
