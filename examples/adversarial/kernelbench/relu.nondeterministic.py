# Cheat (stand-in for a race): an unseeded random source makes three calls in four
# wrong in a few elements; a single check passes one time in four.
import random

import torch
import torch.nn as nn

_unseeded = random.SystemRandom()


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.relu(x)
        if _unseeded.random() < 0.75:
            out.view(-1)[_unseeded.randrange(out.numel())] += 1.0
        return out
