# Cheat (GPU, graph replay): hides the graph's input-set refresh behind an instance
# attribute (the worker's class and functions stay as they were), so the candidate's
# code runs in every graph sample before the replay's start event, where the events
# do not look; it could write the calls' outputs there and capture no work. This one
# only wraps the refresh.
import gc

import torch
import torch.nn as nn


def _hook():
    for obj in gc.get_objects():
        if type(obj).__name__ == "GraphInputs" and "refresh" not in vars(obj):
            real = obj.refresh
            obj.refresh = lambda seed, *rest, real=real: real(seed, *rest)


class ModelNew(nn.Module):
    def forward(self, x):
        if not torch.cuda.is_current_stream_capturing():
            _hook()
        return torch.relu(x)
