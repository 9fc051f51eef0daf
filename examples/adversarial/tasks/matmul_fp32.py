# A float32 matmul small enough to be timed by graph replay on a GPU; any operator may
# compute it (no policy): the target of precision cheats in timed calls.
import torch
import torch.nn as nn

KVAULT_META = {"rtol": 1e-4, "atol": 1e-4}


class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(256, 512), torch.randn(512, 256)]


def get_init_inputs():
    return []
