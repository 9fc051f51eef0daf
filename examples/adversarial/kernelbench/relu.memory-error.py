# Cheat: Python's own MemoryError raised instead of a wrong answer (zeros): out of
# memory beside other lanes was no verdict (infra_error) where its mismatch is one.
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        raise MemoryError("out of memory")
