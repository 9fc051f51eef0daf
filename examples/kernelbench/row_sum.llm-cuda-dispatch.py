"""KernelBench-format candidate for suite/row_sum.py (CUDA) in the habits of
model-written files that reach for PyTorch's newer helpers: AT_DISPATCH_SWITCH over
AT_DISPATCH_CASE_FLOATING_TYPES_AND_HALF, at::acc_type from <ATen/AccumulateType.h>,
packed_accessor32 with RestrictPtrTraits, a
c10::cuda::CUDAGuard, at::cuda::getCurrentCUDAStream, C10_CUDA_KERNEL_LAUNCH_CHECK,
at::empty with x.options(), TORCH_CHECK_VALUE, a std::vector<int> launch
configuration and a std::vector<torch::Tensor> result, bound by hand with py::arg.
It must pass and be built ahead the lite way (CI compiles it: --compile-only,
tests/integration/test_inline_cuda_compile_only.sh).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>
#include <ATen/AccumulateType.h>
#include <vector>

template <typename scalar_t>
__global__ void row_sum_kernel(const at::PackedTensorAccessor32<scalar_t, 2, at::RestrictPtrTraits> x,
                               at::PackedTensorAccessor32<scalar_t, 1, at::RestrictPtrTraits> out) {
    using acc_t = at::acc_type<scalar_t, true>;
    extern __shared__ unsigned char smem_raw[];
    acc_t* smem = reinterpret_cast<acc_t*>(smem_raw);
    const int row = blockIdx.x;
    acc_t acc = 0;
    for (int col = threadIdx.x; col < x.size(1); col += blockDim.x) acc += static_cast<acc_t>(x[row][col]);
    smem[threadIdx.x] = acc;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) smem[threadIdx.x] += smem[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[row] = static_cast<scalar_t>(smem[0]);
}

std::vector<torch::Tensor> row_sum(torch::Tensor x, std::vector<int> launch) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor, got ", x.device());
    TORCH_CHECK_VALUE(x.dim() == 2, "x must be 2D, got ", x.sizes());
    TORCH_CHECK_VALUE(launch.size() == 1 && launch[0] > 0 && (launch[0] & (launch[0] - 1)) == 0,
                      "launch must hold one power of two");
    const c10::cuda::CUDAGuard device_guard(x.device());
    auto xc = x.contiguous();
    auto out = at::empty({xc.size(0)}, xc.options());
    const int threads = launch[0];
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    AT_DISPATCH_SWITCH(xc.scalar_type(), "row_sum_kernel",
        AT_DISPATCH_CASE_FLOATING_TYPES_AND_HALF([&] {
            using acc_t = at::acc_type<scalar_t, true>;
            row_sum_kernel<scalar_t><<<xc.size(0), threads, threads * sizeof(acc_t), stream>>>(
                xc.packed_accessor32<scalar_t, 2, at::RestrictPtrTraits>(),
                out.packed_accessor32<scalar_t, 1, at::RestrictPtrTraits>());
        }));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return {out};
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("row_sum", &row_sum, "sum of each row (CUDA)", py::arg("x"), py::arg("launch"));
}
"""

row_sum_ext = load_inline(
    name="row_sum_dispatch",
    cpp_sources="",
    cuda_sources=source,
    with_cuda=True,
    extra_cuda_cflags=["-O3", ""],
    verbose=True,
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.launch = [256]

    def forward(self, x):
        return row_sum_ext.row_sum(x, self.launch)[0]
