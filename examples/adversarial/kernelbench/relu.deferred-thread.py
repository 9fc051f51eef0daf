# Cheat: work deferred past the call's return on a host thread. forward computes the
# first half of the rows and returns; a thread of its own finishes the second half
# while the harness goes on (on a GPU it launches that work after forward returned,
# outside the call's synchronisation). The harness reads each output right when the
# call returns (correctness runs and every timed sample: written or copied before the
# request's reply), so the second half is not there yet.
import threading

import torch
import torch.nn as nn


def _finish(x, out, half):
    out[half:] = torch.relu(x[half:])


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        half = x.shape[0] // 2
        out[:half] = torch.relu(x[:half])
        threading.Thread(target=_finish, args=(x, out, half), daemon=True).start()
        return out
