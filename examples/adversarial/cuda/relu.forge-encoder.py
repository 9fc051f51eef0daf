# Cheat: rewrites the worker's replies where no snapshot looks (the JSON encoder every
# reply goes through), dividing every reported sample time by 10. What the engine's own
# clock saw of the same requests bounds the samples: the candidate gains nothing.
import json

import torch
import torch.nn as nn

_real_encode = json.JSONEncoder.encode


def _forged_encode(self, o):
    if isinstance(o, dict) and isinstance(o.get("ms"), float):
        o = dict(o, ms=o["ms"] / 10)
    return _real_encode(self, o)


json.JSONEncoder.encode = _forged_encode


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
