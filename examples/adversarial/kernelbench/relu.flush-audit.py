# Cheat: an audit hook (sys.addaudithook: it can never be removed) runs the
# candidate's code on every audited event of the worker: files it opens, ctypes calls
# (the flush's reset of persisting L2 lines on a GPU), imports, between the samples
# where no clock looks. Here it only counts.
import sys

import torch
import torch.nn as nn

SEEN = []


def _hook(event, args):
    if event in ("open", "ctypes.call_function"):
        SEEN.append(event)
        del SEEN[:-64]


sys.addaudithook(_hook)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
