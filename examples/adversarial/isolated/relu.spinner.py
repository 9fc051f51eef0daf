# Cheat: leaves detached processes (setsid, double fork) that keep the CPU busy, and
# pause while its own forward runs: the reference, timed in another worker, runs
# slower, the candidate does not. The engine stops every process of the candidate's
# side while the reference is timed.
import os
import tempfile
import time

import torch
import torch.nn as nn

_FLAG = os.path.join(tempfile.gettempdir(), "kv-spinner-pause")
_STARTED = []


def _spin():
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if os.path.exists(_FLAG):
            time.sleep(0.0002)
            continue
        x = 0
        for i in range(20000):
            x += i


def _start_spinners(count):
    for _ in range(count):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                try:
                    _spin()
                finally:
                    os._exit(0)
            os._exit(0)
        os.wait()


class ModelNew(nn.Module):
    def forward(self, x):
        open(_FLAG, "w").close()
        try:
            if not _STARTED:
                _STARTED.append(1)
                _start_spinners(min(4, os.cpu_count() or 2))
            return torch.relu(x)
        finally:
            os.remove(_FLAG)
