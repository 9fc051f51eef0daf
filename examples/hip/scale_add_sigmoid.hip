// Correct HIP solution for suite/scale_add_sigmoid.py: sigmoid(x * 2.5 + y) on fp16,
// computed in float and rounded once to fp16.
#include <hip/hip_runtime.h>
#include <torch/extension.h>
#include <c10/core/DeviceGuard.h>
#include <hip/hip_fp16.h>
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

__global__ void scale_add_sigmoid_kernel(const __half* __restrict__ x, const __half* __restrict__ y,
                                         __half* __restrict__ out, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float z = __half2float(x[i]) * 2.5f + __half2float(y[i]);
    out[i] = __float2half(1.0f / (1.0f + expf(-z)));
  }
}

torch::Tensor forward(torch::Tensor x, torch::Tensor y) {
  TORCH_CHECK(x.is_cuda() && y.is_cuda(), "scale_add_sigmoid: GPU tensors expected");
  TORCH_CHECK(x.scalar_type() == torch::kFloat16 && y.scalar_type() == torch::kFloat16,
              "scale_add_sigmoid: float16 expected");
  TORCH_CHECK(x.sizes() == y.sizes(), "scale_add_sigmoid: shapes differ");
  const c10::DeviceGuard device_guard(x.device());
  const auto xc = x.contiguous();
  const auto yc = y.contiguous();
  auto out = torch::empty(xc.sizes(), xc.options());
  const int64_t n = xc.numel();
  if (n == 0) return out;
  hipStream_t stream = KV_CURRENT_STREAM();
  hipLaunchKernelGGL(scale_add_sigmoid_kernel, dim3(grid_for(n)), dim3(kThreads), 0, stream,
                     reinterpret_cast<const __half*>(xc.data_ptr<at::Half>()),
                     reinterpret_cast<const __half*>(yc.data_ptr<at::Half>()),
                     reinterpret_cast<__half*>(out.data_ptr<at::Half>()), n);
  kv_check_launch("scale_add_sigmoid");
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("forward", &forward, "scale_add_sigmoid fp16 (HIP)");
}
