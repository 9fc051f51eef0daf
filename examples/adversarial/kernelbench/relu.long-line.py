# Attack on the engine, not the verdict: an honest relu whose inline source holds an
# #include line of 60,000 characters in a block the compiler skips. The engine read
# each line of a source with std::regex (which include lines, which module block),
# recursing once a character: it overflowed its stack and the engine died (every lane
# of the run, or a whole `kvault serve`). Lines that long are no longer matched; the
# candidate passes as the correct kernel it is.
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = ("#if 0\n#include <" + "a" * 60000 + ">\n#endif\n"
        "torch::Tensor relu_forward(torch::Tensor x) { return x.clamp_min(0.0); }")
_ext = load_inline(name="kvault_adv_relu_long_line", cpp_sources=_SRC, functions=["relu_forward"],
                   verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_forward(x)
