# Cheat: hides the synchronisation of the worker's device object (an instance
# attribute; the worker's class and functions stay as they were), found on the
# caller's stack. Every events sample ends at that synchronisation: without it, work
# the call leaves on a stream of its own is not in the sample (on the CPU it is a
# no-op anyway, so nothing is gained there; the patch is what is caught).
import sys

import torch
import torch.nn as nn


def _unsynchronise():
    frame = sys._getframe(1)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            device = getattr(value, "device", value)
            if type(device).__module__ == "kvault_worker.device" and "synchronize" not in vars(device):
                device.synchronize = lambda: None
                return
        frame = frame.f_back


class ModelNew(nn.Module):
    def forward(self, x):
        _unsynchronise()
        return torch.relu(x)
