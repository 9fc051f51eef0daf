# Attack on the host, through the compile: a relu whose inline source includes
# /dev/zero where the compiler reads it (not in an #if 0 block). cc1plus reads an
# endless file into a buffer it doubles, about a GB a second: before, nothing bounded
# a compile's memory but its timeout (300 s), and the host ran out long before. The
# compile now has a heap limit (KVAULT_SANDBOX_MEMORY_MB, at most 16 GiB when unset):
# cc1plus runs out of memory, the candidate's compile_error.
# Checked by tests/integration/test_build_sandbox.sh under a 1.5 GB limit (the CPU
# suite's default limit would let it take several GB first).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include "/dev/zero"
torch::Tensor relu_forward(torch::Tensor x) { return x.clamp_min(0.0); }
"""
_ext = load_inline(name="kvault_adv_relu_include_zero_live", cpp_sources=_SRC, functions=["relu_forward"],
                   verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_forward(x)
