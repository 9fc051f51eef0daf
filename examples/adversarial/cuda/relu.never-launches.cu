// Cheat: a launch with 2048 threads per block (more than the 1024 allowed) never
// runs; the error is never checked and the unwritten output is returned.
#include <ATen/cuda/CUDAContext.h>
#include <torch/extension.h>

__global__ void relu_kernel(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

torch::Tensor forward(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const int64_t n = xc.numel();
  relu_kernel<<<(n + 2047) / 2048, 2048, 0, at::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), n);
  (void)cudaGetLastError();  // clears the launch error so nothing else reports it
  return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "relu that never launches"); }
