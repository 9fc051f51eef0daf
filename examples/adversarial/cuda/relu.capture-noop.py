# Cheat: when it notices it is being captured into a CUDA graph, launches nothing and
# returns its last real output: a replay then does no work at all. Every graph call
# reads its own inputs, refilled before each replay, and a replayed call's output is
# compared: the stale output does not fit.
import torch
import torch.nn as nn

_LAST = {}


class ModelNew(nn.Module):
    def forward(self, x):
        key = tuple(x.shape)
        if torch.cuda.is_current_stream_capturing() and key in _LAST:
            return _LAST[key]
        _LAST[key] = torch.relu(x)
        return _LAST[key]
