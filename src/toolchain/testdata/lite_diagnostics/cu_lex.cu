#include <torch/extension.h>
__global__ void k(float* x, int n) { int i = threadIdx.x; if (i < n) x[i] = 0; }
torch::Tensor f(torch::Tensor a) {
    const char* s = "abc;
    int y = 3 @ 4;
    k<<<1, 32>>>(a.data_ptr<float>(), a.numel());
    return a;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
m.def("f", torch::wrap_pybind_function(f), "f");
}
