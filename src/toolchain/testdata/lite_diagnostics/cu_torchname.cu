#include <torch/extension.h>
#include <torch/types.h>
#include <cuda.h>
#include <cuda_runtime.h>
__global__ void k(float* x, int n) { int i = threadIdx.x; if (i < n) x[i] = 0; }
torch::Tensor f(torch::Tensor a, torch::Tensor b) {
    auto out = torch::matmul(a, b);
    k<<<1, 32>>>(out.data_ptr<float>(), out.numel());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
m.def("f", torch::wrap_pybind_function(f), "f");
}
