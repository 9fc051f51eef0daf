# Attack on the build, not the verdict: an honest relu whose extension name ends the
# compiler's command and starts one of its own. The engine builds the call under a
# name of its own, but a call it leaves to PyTorch's load_inline in the worker (here:
# one with an include folder) is built with -DTORCH_EXTENSION_NAME=<name> unquoted in
# the line a shell runs. The worker now notes the name and the engine checks it like
# a define's value: the candidate's compile_error names it.
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = "torch::Tensor relu_forward(torch::Tensor x) { return x.clamp_min(0.0); }"
_ext = load_inline(name="relu;touch kvault-adv-ran #", cpp_sources=_SRC, functions=["relu_forward"],
                   extra_include_paths=["include"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_forward(x)
