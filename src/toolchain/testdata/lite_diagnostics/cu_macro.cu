#include <torch/extension.h>
#include <torch/types.h>
#include <cuda.h>
#include <cuda_runtime.h>
C10_LAUNCH_BOUNDS_1(256) __global__ void k(float* x, int n) { int i = threadIdx.x; if (i < n) x[i] = 0; }
torch::Tensor f(torch::Tensor a) {
    k<<<1, 32>>>(a.data_ptr<float>(), a.numel());
    return a;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
m.def("f", torch::wrap_pybind_function(f), "f");
}
