# Attack on the build, not the verdict: an honest relu whose include folder holds
# newlines, which end the `cflags = ...` line of PyTorch's ninja file (calls with
# include folders were left to PyTorch's build in the worker) and declare a rule and
# a build statement of the candidate's: ninja runs its command beside the compile.
# A folder is now a plain path: the candidate's compile_error names it.
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = "torch::Tensor relu_forward(torch::Tensor x) { return x.clamp_min(0.0); }"
_INJECTED = "include\nrule kvault_adv\n  command = touch $out\nbuild kvault-adv-ran: kvault_adv\ndefault kvault-adv-ran"
_ext = load_inline(name="kvault_adv_relu_include_ninja", cpp_sources=_SRC, functions=["relu_forward"],
                   extra_include_paths=[_INJECTED], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_forward(x)
