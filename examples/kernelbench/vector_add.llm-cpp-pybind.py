"""KernelBench-format candidate for suite/vector_add.py (CUDA) binding by hand in
cpp_sources, as models do when they leave functions= out: cpp_sources hold the
launcher's declaration (with a default argument the definition repeats not) and a
PYBIND11_MODULE with a docstring and py::arg names; the kernel and launcher are in
cuda_sources, launched on the legacy default stream with torch::zeros_like outputs.
It must pass and be built ahead the lite way (CI compiles it: --compile-only,
tests/integration/test_inline_cuda_compile_only.sh); before, such calls were left to
PyTorch's own build in the worker.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void vector_add_kernel(const float* a, const float* b, float* out, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = a[i] + b[i];
    }
}

torch::Tensor vector_add_cuda(torch::Tensor a, torch::Tensor b, int64_t block_size) {
    TORCH_CHECK(a.sizes() == b.sizes(), "a and b must have the same shape");
    auto a_c = a.contiguous();
    auto b_c = b.contiguous();
    auto out = torch::zeros_like(a_c);
    int64_t n = a_c.numel();
    int64_t blocks = (n + block_size - 1) / block_size;
    vector_add_kernel<<<blocks, block_size>>>(a_c.data_ptr<float>(), b_c.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""

cpp_source = """
#include <torch/extension.h>

torch::Tensor vector_add_cuda(torch::Tensor a, torch::Tensor b, int64_t block_size = 256);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("vector_add", &vector_add_cuda, "Elementwise a + b (CUDA)",
          py::arg("a"), py::arg("b"), py::arg("block_size") = 256);
}
"""

vector_add = load_inline(
    name="vector_add_cpp_pybind",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    extra_cflags=[""],
    extra_cuda_cflags=["-O3"],
    verbose=True,
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, a, b):
        return vector_add.vector_add(a, b)
