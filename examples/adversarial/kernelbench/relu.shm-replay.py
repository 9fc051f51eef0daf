# Cheat, second half: computes nothing; replays the answers relu.shm-leave.py left in
# /dev/shm, /tmp or $HOME (keyed by the input's bytes), zeros when there are none.
# Where a worker's scratch is its own and ends with it, there is nothing to replay:
# mismatch.
import hashlib
import os

import torch
import torch.nn as nn

FOLDERS = ["/dev/shm/kvault-answers", "/tmp/kvault-answers",
           os.path.join(os.environ.get("HOME", "/tmp"), "kvault-answers")]


def key(x):
    return hashlib.sha256(repr((tuple(x.shape), str(x.dtype))).encode() + x.contiguous().cpu().numpy().tobytes()).hexdigest()


class ModelNew(nn.Module):
    def forward(self, x):
        k = key(x)
        for folder in FOLDERS:
            path = os.path.join(folder, k + ".pt")
            if os.path.exists(path):
                return torch.load(path).to(x.device)
        return torch.zeros_like(x)
