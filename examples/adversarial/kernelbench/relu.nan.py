# Cheat: NaN and infinities in the output (a loose comparison with NaN == NaN, or
# an |a - b| <= tol test that ignores non-finite values, would let it through).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.relu(x)
        out.view(-1)[::7] = float("nan")
        out.view(-1)[3::7] = float("inf")
        return out
