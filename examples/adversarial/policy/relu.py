# Cheat under the policy `gen` applies by default (custom_kernel), on a task that
# carries none: a KernelBench answer that simply calls PyTorch's relu. It passed at
# 1.00x (reward 1.4) on the H200 before `gen` applied custom_kernel.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
