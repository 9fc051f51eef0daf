"""A KernelBench-sized task (bench/h200_throughput.sh): ReLU over a 3.2 GB float32
tensor (KernelBench level 1 scales single operators to inputs of several GB), with
KernelBench's 5 correctness trials as seeds."""
import torch
import torch.nn as nn

BATCH, DIM = 4096, 196608  # 805,306,368 floats = 3.2 GB

KVAULT_META = {"seeds": 5}


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
