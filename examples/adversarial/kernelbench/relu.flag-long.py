# Attack on the engine, not the verdict: an honest relu whose extra_cflags hold one
# define of 60,000 characters. The engine matched each flag against its allow-list
# with std::regex, which recurses once a character: the match overflowed its stack
# and the engine died (every lane of the run, or a whole `kvault serve`). A flag
# longer than 1024 characters is now refused unread: the candidate's compile_error.
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = "torch::Tensor relu_forward(torch::Tensor x) { return x.clamp_min(0.0); }"
_ext = load_inline(name="kvault_adv_relu_flag_long", cpp_sources=_SRC, functions=["relu_forward"],
                   extra_cflags=["-O2", "-DKVAULT_PAD=" + "a" * 60000], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_forward(x)
