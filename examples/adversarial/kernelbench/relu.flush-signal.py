# Cheat: an interval timer's signal handler runs the candidate's code between any two
# bytecodes of the worker's own work, the flush between samples included, where no
# clock looks (there it could warm the caches the flush just cleared). Here it only
# notes the frames it interrupted.
import signal

import torch
import torch.nn as nn

SEEN = []


def _tick(number, frame):
    SEEN.append(frame.f_code.co_name if frame is not None else None)
    del SEEN[:-64]


class ModelNew(nn.Module):
    def forward(self, x):
        if signal.getsignal(signal.SIGALRM) is not _tick:
            signal.signal(signal.SIGALRM, _tick)
            signal.setitimer(signal.ITIMER_REAL, 0.0005, 0.0005)
        return torch.relu(x)
