// WRONG on purpose (suite/max_pool2d.py): the running maximum starts at 0 instead
// of -infinity, so a window whose values are all negative yields 0.
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
constexpr int kKernel = 3, kStride = 2, kPad = 1;

__global__ void max_pool2d_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t planes,
                                  int64_t height, int64_t width, int64_t out_h, int64_t out_w) {
  const int64_t total = planes * out_h * out_w;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += stride) {
    const int64_t ow = idx % out_w;
    const int64_t oh = (idx / out_w) % out_h;
    const int64_t p = idx / (out_w * out_h);
    const float* plane = x + p * height * width;
    float best = 0.0f;
    for (int i = 0; i < kKernel; ++i) {
      const int64_t ih = oh * kStride - kPad + i;
      if (ih < 0 || ih >= height) continue;
      for (int j = 0; j < kKernel; ++j) {
        const int64_t iw = ow * kStride - kPad + j;
        if (iw < 0 || iw >= width) continue;
        best = fmaxf(best, plane[ih * width + iw]);
      }
    }
    y[idx] = best;
  }
}

torch::Tensor forward(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda(), "max_pool2d: GPU tensor expected");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "max_pool2d: float32 expected");
  TORCH_CHECK(x.dim() == 4, "max_pool2d: NCHW input expected");
  const c10::DeviceGuard device_guard(x.device());
  const auto xc = x.contiguous();
  const int64_t planes = xc.size(0) * xc.size(1), height = xc.size(2), width = xc.size(3);
  const int64_t out_h = (height + 2 * kPad - kKernel) / kStride + 1;
  const int64_t out_w = (width + 2 * kPad - kKernel) / kStride + 1;
  auto out = torch::empty({xc.size(0), xc.size(1), out_h, out_w}, xc.options());
  const int64_t total = out.numel();
  if (total == 0) return out;
  const int blocks = static_cast<int>(std::min<int64_t>((total + kThreads - 1) / kThreads, 4096));
  hipStream_t stream = KV_CURRENT_STREAM();
  hipLaunchKernelGGL(max_pool2d_kernel, dim3(blocks), dim3(kThreads), 0, stream,
                     xc.data_ptr<float>(), out.data_ptr<float>(), planes, height, width, out_h, out_w);
  kv_check_launch("max_pool2d");
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "max_pool2d (HIP)"); }
