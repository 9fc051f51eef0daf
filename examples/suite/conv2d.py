"""2-D convolution, stride 1, "same" padding (kernel_size // 2), with bias (fp32).

Has a functional twin: extension-format kernels receive (x, weight, bias).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def module_fn(x, weight, bias):
    return F.conv2d(x, weight, bias, stride=1, padding=weight.shape[-1] // 2)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, bias=True)

    def forward(self, x, fn=module_fn):
        return fn(x, self.conv.weight, self.conv.bias)


BATCH, IN_CH, OUT_CH, KSIZE, H, W = 4, 16, 32, 3, 32, 32


def get_inputs():
    return [torch.randn(BATCH, IN_CH, H, W)]


def get_init_inputs():
    return [IN_CH, OUT_CH, KSIZE]


def get_cases():
    return [
        {"name": "default", "kind": "both", "get_inputs": get_inputs},
        {"name": "odd", "kind": "correctness",
         "get_inputs": lambda: [torch.randn(3, 5, 19, 23)],
         "get_init_inputs": lambda: [5, 7, 5]},
    ]
