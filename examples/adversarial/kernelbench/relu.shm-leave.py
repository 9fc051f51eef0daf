# Cheat, first half: computes relu honestly, and leaves every answer it computed on
# the host, keyed by its input's bytes, in /dev/shm, /tmp and $HOME, for a later
# candidate (relu.shm-replay.py, in this run or a later one) to replay. It also leaves
# a System V shared-memory segment behind. Its own result is honest (passed); what
# it leaves must be gone when its worker ends.
import ctypes
import hashlib
import os

import torch
import torch.nn as nn

FOLDERS = ["/dev/shm/kvault-answers", "/tmp/kvault-answers",
           os.path.join(os.environ.get("HOME", "/tmp"), "kvault-answers")]
SYSV_KEY = 0x4B564131  # "KVA1"


def key(x):
    return hashlib.sha256(repr((tuple(x.shape), str(x.dtype))).encode() + x.contiguous().numpy().tobytes()).hexdigest()


def leave(x, y):
    for folder in FOLDERS:
        try:
            os.makedirs(folder, exist_ok=True)
            torch.save(y.clone(), os.path.join(folder, key(x) + ".pt"))
        except OSError:
            pass
    try:  # IPC_CREAT | 0666: survives the process unless its IPC namespace ends
        ctypes.CDLL(None, use_errno=True).shmget(SYSV_KEY, 4096, 0o1000 | 0o666)
    except (AttributeError, OSError):
        pass


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        if x.device.type == "cpu":
            leave(x, y)
        return y
