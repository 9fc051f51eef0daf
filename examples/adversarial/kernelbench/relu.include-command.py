# Attack on the build, not the verdict: an honest relu whose include folder ends the
# compiler's command and starts one of its own (`;`, the rest of the line commented
# out). PyTorch's build in the worker, which calls with include folders were left
# to, writes the folder unquoted into the line a shell runs. A folder is now a plain
# path: the candidate's compile_error names it.
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = "torch::Tensor relu_forward(torch::Tensor x) { return x.clamp_min(0.0); }"
_ext = load_inline(name="kvault_adv_relu_include_command", cpp_sources=_SRC, functions=["relu_forward"],
                   extra_include_paths=["include;touch kvault-adv-ran #", "include`touch kvault-adv-ran`"],
                   verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_forward(x)
