// BAD on purpose (suite/relu.py): does not compile (the kernel uses an undeclared
// variable and a statement lacks its semicolon), so the outcome is compile_error.
#include <hip/hip_runtime.h>
#include <torch/extension.h>

__global__ void relu_kernel(const float* x, float* out, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] > 0.0f ? x[i] : undeclared_zero
}

torch::Tensor forward(torch::Tensor x) {
  auto out = torch::empty_like(x);
  hipLaunchKernelGGL(relu_kernel, dim3(1), dim3(256), 0, 0, x.data_ptr<float>(),
                     out.data_ptr<float>(), x.numel());
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "relu (does not compile)"); }
