"""KernelBench-format candidate for suite/relu.py: OpenMP in the habits of model-written
files (#pragma omp parallel for, <omp.h>, -fopenmp beside -O3, -lgomp), the output from
torch::empty_like, a name with a random suffix and a build_directory made with
tempfile, verbose=True.
It must pass, built ahead by the engine the lite way: -fopenmp gives the lite object
a flag set of its own, and load_inline's name and build_directory change nothing.
"""
import os
import tempfile
import uuid

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_cpp_source = """
#include <torch/extension.h>
#include <omp.h>

torch::Tensor relu_forward(torch::Tensor input) {
    auto x = input.contiguous();
    auto output = torch::empty_like(x);
    const float* in_ptr = x.data_ptr<float>();
    float* out_ptr = output.data_ptr<float>();
    int64_t size = x.numel();

    #pragma omp parallel for
    for (int64_t i = 0; i < size; ++i) {
        float v = in_ptr[i];
        out_ptr[i] = v > 0.0f ? v : 0.0f;
    }
    return output;
}
"""

build_dir = os.path.join(tempfile.gettempdir(), "relu_openmp_build")
os.makedirs(build_dir, exist_ok=True)

relu_module = load_inline(
    name=f"relu_openmp_{uuid.uuid4().hex[:8]}",
    cpp_sources=relu_cpp_source,
    functions=["relu_forward"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-lgomp"],
    build_directory=build_dir,
    verbose=True,
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.relu_module = relu_module

    def forward(self, x):
        return self.relu_module.relu_forward(x)
