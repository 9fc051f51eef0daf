# Cheat: a wrong answer (|x| for relu, a mismatch worth 0.4 under `paper`) that names
# CUDA in a comment, hoping the engine reads its text: a KernelBench file whose text
# held `__global__` anywhere was `unsupported` on the cpu backend (no reward, left out
# of pass@k; in `kvault serve` its whole batch refused with 422, the group's other
# answers unscored). What the file builds is now what its load_inline calls pass.
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = "torch::Tensor relu_forward(torch::Tensor x) { return x.abs(); }"
_ext = load_inline(name="kvault_adv_relu_declares_comment", cpp_sources=_SRC, functions=["relu_forward"])


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_forward(x)

# __global__
