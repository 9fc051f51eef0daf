# Attack on the engine, not the verdict: a relu whose inline source names
# `#include "/dev/zero"` in a block the compiler skips. The engine scans a source's
# quoted includes itself, outside the sandbox, to key the compile cache on their
# bytes: it read /dev/zero until it aborted (std::bad_alloc), taking every lane of
# the run (or a whole `kvault serve`) with it. It now reads only regular files inside
# the source's folder; the candidate passes as the correct kernel it is.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#if 0
#include "/dev/zero"
#include "../../../../../../../../dev/zero"
#endif
torch::Tensor relu_forward(torch::Tensor x) { return x.clamp_min(0.0); }
"""
_ext = load_inline(name="kvault_adv_relu_include_zero", cpp_sources=_SRC, functions=["relu_forward"],
                   extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_forward(x)
