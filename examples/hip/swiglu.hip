// Correct HIP solution for suite/swiglu.py: silu(gate) * up on bf16, computed in
// float and rounded once to bf16.
#include <hip/hip_runtime.h>
#include <torch/extension.h>
#include <c10/core/DeviceGuard.h>
// Launch on PyTorch's current stream: at::hip on ROCm builds of PyTorch, at::cuda when
// built for NVIDIA through HIP portability headers, the null stream otherwise.
#if __has_include(<ATen/hip/HIPContext.h>)
#include <ATen/hip/HIPContext.h>
#define KV_CURRENT_STREAM() at::hip::getCurrentHIPStream()
#elif !defined(__HIP_PLATFORM_AMD__) && !defined(__HIP_PLATFORM_HCC__) && \
    __has_include(<ATen/cuda/CUDAContext.h>)
#include <ATen/cuda/CUDAContext.h>
#define KV_CURRENT_STREAM() at::cuda::getCurrentCUDAStream()
#else
#define KV_CURRENT_STREAM() hipStream_t(nullptr)
#endif

static inline void kv_check_launch(const char* what) {
  const hipError_t err = hipGetLastError();
  TORCH_CHECK(err == hipSuccess, what, ": kernel launch failed: ", hipGetErrorString(err));
}

constexpr int kThreads = 256;

static int grid_for(int64_t n) {
  return static_cast<int>(std::min<int64_t>((n + kThreads - 1) / kThreads, 4096));
}

// bf16 handled as raw 16-bit patterns: the upper half of an IEEE float. This needs no
// bf16 header, so it is the same on ROCm and on NVIDIA.
__device__ __forceinline__ float bf16_to_float(uint16_t bits) {
  return __uint_as_float(static_cast<unsigned int>(bits) << 16);
}

__device__ __forceinline__ uint16_t float_to_bf16(float value) {  // round to nearest even
  unsigned int u = __float_as_uint(value);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // NaN stays a (quiet) NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

__global__ void swiglu_kernel(const uint16_t* __restrict__ gate, const uint16_t* __restrict__ up,
                              uint16_t* __restrict__ out, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float g = bf16_to_float(gate[i]);
    const float silu = g / (1.0f + expf(-g));
    out[i] = float_to_bf16(silu * bf16_to_float(up[i]));
  }
}

torch::Tensor forward(torch::Tensor gate, torch::Tensor up) {
  TORCH_CHECK(gate.is_cuda() && up.is_cuda(), "swiglu: GPU tensors expected");
  TORCH_CHECK(gate.scalar_type() == torch::kBFloat16 && up.scalar_type() == torch::kBFloat16,
              "swiglu: bfloat16 expected");
  TORCH_CHECK(gate.sizes() == up.sizes(), "swiglu: shapes differ");
  const c10::DeviceGuard device_guard(gate.device());
  const auto gc = gate.contiguous();
  const auto uc = up.contiguous();
  auto out = torch::empty(gc.sizes(), gc.options());
  const int64_t n = gc.numel();
  if (n == 0) return out;
  hipStream_t stream = KV_CURRENT_STREAM();
  hipLaunchKernelGGL(swiglu_kernel, dim3(grid_for(n)), dim3(kThreads), 0, stream,
                     reinterpret_cast<const uint16_t*>(gc.data_ptr<at::BFloat16>()),
                     reinterpret_cast<const uint16_t*>(uc.data_ptr<at::BFloat16>()),
                     reinterpret_cast<uint16_t*>(out.data_ptr<at::BFloat16>()), n);
  kv_check_launch("swiglu");
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "swiglu bf16 (HIP)"); }
