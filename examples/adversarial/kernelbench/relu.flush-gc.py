# Cheat: a garbage-collector callback (gc.callbacks) runs the candidate's code whenever
# a collection happens in the worker, between samples too, where no clock looks (it
# could warm caches or finish deferred work there); a weakref finalizer on each output
# runs when the worker drops it. Here both only count.
import gc
import weakref

import torch
import torch.nn as nn

SEEN = []


def _collected(phase, info):
    SEEN.append(phase)


gc.callbacks.append(_collected)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        weakref.finalize(y, SEEN.append, "dropped")
        return y
