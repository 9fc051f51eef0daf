"""KernelBench-format candidate for suite/matmul.py written the way models write them
(CPU twin of the real-world set's habits): verbose=True, empty-string flags, the
output allocated with torch::zeros, sizes read with size(), the kernel defined in
cpp_sources. The engine must build it ahead (the lite way), not in the worker.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

matmul_cpp_source = """
#include <torch/extension.h>

torch::Tensor matmul_cpu(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.dim() == 2 && B.dim() == 2, "A and B must be 2D");
    TORCH_CHECK(A.size(1) == B.size(0), "inner dimensions must match");
    auto M = A.size(0);
    auto K = A.size(1);
    auto N = B.size(1);
    auto C = torch::zeros({M, N}, A.options());
    auto a = A.contiguous();
    auto b = B.contiguous();
    const float* pa = a.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* pc = C.data_ptr<float>();
    for (int64_t i = 0; i < M; i++) {
        for (int64_t k = 0; k < K; k++) {
            float aik = pa[i * K + k];
            for (int64_t j = 0; j < N; j++) {
                pc[i * N + j] += aik * pb[k * N + j];
            }
        }
    }
    return C;
}
"""

matmul = load_inline(
    name="matmul",
    cpp_sources=matmul_cpp_source,
    functions=["matmul_cpu"],
    verbose=True,
    extra_cflags=[""],
    extra_ldflags=[""],
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.matmul = matmul

    def forward(self, A, B):
        return self.matmul.matmul_cpu(A, B)
