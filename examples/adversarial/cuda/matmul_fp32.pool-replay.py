# Cheat (GPU, graph replay): a graph's calls read input sets filled from a small pool.
# When the pool's sets were made from fixed seeds, a candidate could make them itself
# ahead (the timed side's make_inputs, found by the garbage collector, in an eager
# call before the capture), compute their answers where no clock looks, and capture
# calls that only pick their call's answer by a few of its input's values: no matmul
# in the timed graph. The pool is made anew from every sample's seed, so the answers
# made ahead fit no call (mismatch); where no graph is used it computes honestly.
import gc

import torch
import torch.nn as nn

_STATE = {}


def _timed_side():
    for obj in gc.get_objects():
        if type(obj).__name__ == "TimedSide" and getattr(obj, "make_inputs", None) is not None:
            return obj
    return None


def _prepare(a):
    side = _timed_side()
    if side is None:
        return
    from kvault_worker.timing import side as side_module
    seeds = [side_module.POOL_SEED + k for k in range(side_module.POOL_SETS)]
    sets = [side.make_inputs(s) for s in seeds]
    with torch.no_grad():
        _STATE["keys"] = torch.stack([s[0].reshape(-1)[:8] for s in sets])
        _STATE["answers"] = torch.stack([torch.matmul(s[0], s[1]) for s in sets])
    _STATE["ready"] = a.shape


class ModelNew(nn.Module):
    def forward(self, a, b):
        if torch.cuda.is_current_stream_capturing() and _STATE.get("ready") == a.shape:
            hit = (a.reshape(-1)[:8] == _STATE["keys"]).all(dim=1).to(a.dtype)
            return torch.einsum("k,kij->ij", hit, _STATE["answers"])
        if "ready" not in _STATE:
            _prepare(a)
        return torch.matmul(a, b)
