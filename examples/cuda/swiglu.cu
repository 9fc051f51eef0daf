// Correct CUDA solution for suite/swiglu.py: silu(gate) * up on bf16, computed in float
// and rounded once to bf16 (cuda_bf16.h intrinsics).
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

constexpr int kThreads = 256;

__global__ void swiglu_kernel(const __nv_bfloat16* __restrict__ gate,
                              const __nv_bfloat16* __restrict__ up, __nv_bfloat16* __restrict__ y,
                              int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float g = __bfloat162float(gate[i]);
    y[i] = __float2bfloat16_rn(g / (1.0f + expf(-g)) * __bfloat162float(up[i]));
  }
}

torch::Tensor forward(torch::Tensor gate, torch::Tensor up) {
  TORCH_CHECK(gate.is_cuda() && up.is_cuda(), "swiglu: CUDA tensors expected");
  TORCH_CHECK(gate.scalar_type() == torch::kBFloat16 && up.scalar_type() == torch::kBFloat16,
              "swiglu: bfloat16 expected");
  TORCH_CHECK(gate.sizes() == up.sizes(), "swiglu: shapes differ");
  const c10::cuda::CUDAGuard device_guard(gate.device());
  const auto gc = gate.contiguous();
  const auto uc = up.contiguous();
  auto out = torch::empty(gc.sizes(), gc.options());
  const int64_t n = gc.numel();
  if (n == 0) return out;
  const int blocks = static_cast<int>(std::min<int64_t>((n + kThreads - 1) / kThreads, 4096));
  swiglu_kernel<<<blocks, kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      reinterpret_cast<const __nv_bfloat16*>(gc.data_ptr<at::BFloat16>()),
      reinterpret_cast<const __nv_bfloat16*>(uc.data_ptr<at::BFloat16>()),
      reinterpret_cast<__nv_bfloat16*>(out.data_ptr<at::BFloat16>()), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "swiglu bf16 (CUDA)"); }
