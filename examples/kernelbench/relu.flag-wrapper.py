"""A cheat for suite/relu.py: a correct inline C++ loop whose extra_cflags ask g++ to
run a command (`-wrapper`) where the engine builds the call. A flag off g++'s
allow-list is the candidate's compile_error, and the command never runs
(tests/integration/test_example_suite_cpu.sh checks that its marker file is absent).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = """
torch::Tensor relu_forward(torch::Tensor x) {
    auto y = torch::zeros_like(x);
    auto xc = x.contiguous();
    const float* px = xc.data_ptr<float>();
    float* py = y.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); i++) py[i] = px[i] > 0 ? px[i] : 0;
    return y;
}
"""

relu = load_inline(
    name="relu",
    cpp_sources=relu_source,
    functions=["relu_forward"],
    verbose=True,
    extra_cflags=["-O3", "-wrapper", "/bin/sh,-c,touch /tmp/kvault-flag-wrapper-ran; exec \"$0\" \"$@\""],
)


class ModelNew(nn.Module):
    def forward(self, x):
        return relu.relu_forward(x)
