// WRONG on purpose (suite/mse_loss.py): adds up the squared differences but never
// divides by n: a sum, not a mean.
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

constexpr int kThreads = 256;  // a power of two: the tree reductions below rely on it

// Block-wide sum through shared memory; every thread of the block must call it and
// gets the total. No warp-size assumption: the same code is right for 32 and 64 lanes.
__device__ float block_sum(float value, float* smem) {
  const int tid = threadIdx.x;
  smem[tid] = value;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (tid < s) smem[tid] += smem[tid + s];
    __syncthreads();
  }
  const float total = smem[0];
  __syncthreads();  // everyone has read smem[0] before smem is reused
  return total;
}

__global__ void mse_kernel(const float* __restrict__ pred, const float* __restrict__ target,
                           float* __restrict__ out, int64_t n, float inv_n) {
  __shared__ float smem[kThreads];
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  float local = 0.0f;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
    const float d = pred[i] - target[i];
    local += d * d;
  }
  const float block_total = block_sum(local, smem);
  if (threadIdx.x == 0) atomicAdd(out, block_total);  // BUG: inv_n unused
}

torch::Tensor forward(torch::Tensor pred, torch::Tensor target) {
  TORCH_CHECK(pred.is_cuda() && target.is_cuda(), "mse_loss: GPU tensors expected");
  TORCH_CHECK(pred.scalar_type() == torch::kFloat32 && target.scalar_type() == torch::kFloat32,
              "mse_loss: float32 expected");
  TORCH_CHECK(pred.sizes() == target.sizes(), "mse_loss: shapes differ");
  const c10::DeviceGuard device_guard(pred.device());
  const auto pc = pred.contiguous();
  const auto tc = target.contiguous();
  const int64_t n = pc.numel();
  TORCH_CHECK(n > 0, "mse_loss: empty input");
  auto out = torch::zeros({}, pc.options());  // 0-dim, like torch.mean
  const int blocks = static_cast<int>(std::min<int64_t>((n + kThreads - 1) / kThreads, 1024));
  hipStream_t stream = KV_CURRENT_STREAM();
  hipLaunchKernelGGL(mse_kernel, dim3(blocks), dim3(kThreads), 0, stream, pc.data_ptr<float>(),
                     tc.data_ptr<float>(), out.data_ptr<float>(), n,
                     static_cast<float>(1.0 / static_cast<double>(n)));
  kv_check_launch("mse_loss");
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "mse_loss (HIP)"); }
