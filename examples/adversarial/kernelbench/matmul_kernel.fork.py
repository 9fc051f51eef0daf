# Cheat under policy custom_kernel: PyTorch's matmul in a forked child process, whose
# operators the parent's process-wide observer never sees (the child's copy of the
# observer records into the child's memory; the child closes its copies of the
# parent's files first, so that copy cannot write into the parent's trace); the
# product comes back through a tensor in shared memory.
import os

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        out = torch.empty((a.shape[0], b.shape[1]), dtype=a.dtype).share_memory_()
        pid = os.fork()
        if pid == 0:
            try:
                os.closerange(3, 4096)
                out.copy_(torch.matmul(a, b))
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        return out
