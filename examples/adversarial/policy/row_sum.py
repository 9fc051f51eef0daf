# Cheat under custom_kernel (the engine's, the task carries none): the row sums
# computed by PyTorch on a Python thread, hidden from a thread-local trace.
from concurrent.futures import ThreadPoolExecutor

import torch
import torch.nn as nn

_pool = ThreadPoolExecutor(max_workers=1)


class ModelNew(nn.Module):
    def forward(self, x):
        return _pool.submit(torch.sum, x, 1).result()
