// Correct CUDA solution for suite/gelu_tanh.py: tanh-approximate GELU on fp16, computed
// in float and rounded once to fp16 (cuda_fp16.h intrinsics).
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

constexpr int kThreads = 256;

__device__ __forceinline__ float gelu_tanh(float x) {
  const float k_sqrt_2_over_pi = 0.7978845608028654f;
  return 0.5f * x * (1.0f + tanhf(k_sqrt_2_over_pi * (x + 0.044715f * x * x * x)));
}

__global__ void gelu_tanh_kernel(const __half* __restrict__ x, __half* __restrict__ y, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = __float2half_rn(gelu_tanh(__half2float(x[i])));
}

torch::Tensor forward(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda(), "gelu_tanh: CUDA tensor expected");
  TORCH_CHECK(x.scalar_type() == torch::kFloat16, "gelu_tanh: float16 expected");
  const c10::cuda::CUDAGuard device_guard(x.device());
  const auto xc = x.contiguous();
  auto out = torch::empty(xc.sizes(), xc.options());
  const int64_t n = xc.numel();
  if (n == 0) return out;
  const int blocks = static_cast<int>(std::min<int64_t>((n + kThreads - 1) / kThreads, 4096));
  gelu_tanh_kernel<<<blocks, kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      reinterpret_cast<const __half*>(xc.data_ptr<at::Half>()),
      reinterpret_cast<__half*>(out.data_ptr<at::Half>()), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "gelu_tanh fp16 (CUDA)"); }
