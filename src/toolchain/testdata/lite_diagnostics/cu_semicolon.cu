#include <torch/extension.h>
#include <torch/types.h>
#include <cuda.h>
#include <cuda_runtime.h>
__global__ void relu_kernel(const float* x, float* out, int size) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x
    if (idx < size) {
        out[idx] = x[idx] > 0.0f ? x[idx] : 0.0f;
    }
}
torch::Tensor relu_cuda(torch::Tensor x) {
    auto size = x.numel();
    auto out = torch::zeros_like(x);
    relu_kernel<<<(size + 255) / 256, 256>>>(x.data_ptr<float>(), out.data_ptr<float>(), size);
    return out;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
m.def("relu_cuda", torch::wrap_pybind_function(relu_cuda), "relu_cuda");
}
