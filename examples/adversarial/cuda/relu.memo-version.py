# Cheat: caches device outputs by (address, version counter). Timed inputs that were
# never refilled between capture, warm-up and samples would replay it; each timed
# sample now gets new inputs and each captured call its own buffers.
import torch
import torch.nn as nn

_CACHE = {}


class ModelNew(nn.Module):
    def forward(self, x):
        key = (x.data_ptr(), x._version)
        if key not in _CACHE:
            if len(_CACHE) > 4096:
                _CACHE.clear()
            _CACHE[key] = torch.relu(x)
        return _CACHE[key]
