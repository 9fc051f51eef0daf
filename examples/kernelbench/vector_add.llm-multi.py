"""KernelBench-format candidate for suite/vector_add.py: two load_inline calls in one
file (a checking helper and the kernel), with_cuda=False, a std::vector<torch::Tensor>
return, a bool argument, #include <vector>.
Both calls are built ahead, the lite way; it must pass.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

check_source = """
#include <torch/extension.h>
#include <vector>

std::vector<torch::Tensor> prepare_inputs(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.sizes() == b.sizes(), "a and b must have the same shape");
    TORCH_CHECK(a.device().is_cpu(), "a must be a CPU tensor");
    return {a.contiguous(), b.contiguous()};
}
"""

add_source = """
#include <torch/extension.h>

torch::Tensor vector_add(torch::Tensor a, torch::Tensor b, bool in_place) {
    auto out = in_place ? a : torch::empty_like(a);
    const float* pa = a.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* po = out.data_ptr<float>();
    const int64_t n = a.numel();
    for (int64_t i = 0; i < n; i++) {
        po[i] = pa[i] + pb[i];
    }
    return out;
}
"""

check_ext = load_inline(
    name="check_ext",
    cpp_sources=check_source,
    functions=["prepare_inputs"],
    with_cuda=False,
    verbose=True,
)

add_ext = load_inline(
    name="vector_add_ext",
    cpp_sources=add_source,
    functions=["vector_add"],
    with_cuda=False,
    extra_cflags=["-O3", "-funroll-loops"],
    verbose=True,
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, a, b):
        a, b = check_ext.prepare_inputs(a, b)
        return add_ext.vector_add(a, b, False)
