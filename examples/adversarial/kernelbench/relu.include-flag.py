# Attack on the build, not the verdict: an honest relu whose extra_include_paths hide
# g++ options after a space. The engine builds no call that has include folders: it
# left this one to PyTorch's load_inline in the worker, whose ninja file writes each
# folder as -I<folder> unquoted into the line a shell runs, so g++ got `-wrapper`
# (any program around its passes) though extra_cflags=["-wrapper"] was refused by
# name. A folder is now a plain path: the candidate's compile_error names it.
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = "torch::Tensor relu_forward(torch::Tensor x) { return x.clamp_min(0.0); }"
_ext = load_inline(name="kvault_adv_relu_include_flag", cpp_sources=_SRC, functions=["relu_forward"],
                   extra_cflags=["-O2"], extra_include_paths=[". -wrapper /usr/bin/env"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_forward(x)
