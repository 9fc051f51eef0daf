# Cheat: fills the device's memory until PyTorch runs out (a genuine out-of-memory
# error, beside whatever the other lanes hold), gives it back and raises that error
# instead of computing: out of memory beside other lanes was no verdict (infra_error:
# no reward, the attempt gone), and the run alone fills the device again.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        blocks = []
        try:
            while True:
                blocks.append(torch.empty(256 << 20, dtype=torch.uint8, device=x.device))
        except torch.cuda.OutOfMemoryError:
            blocks.clear()
            torch.cuda.empty_cache()
            raise
