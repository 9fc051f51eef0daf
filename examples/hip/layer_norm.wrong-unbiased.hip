// WRONG on purpose (suite/layer_norm.py): divides the sum of squares by D - 1
// (unbiased variance); LayerNorm uses the biased variance (divide by D).
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

__global__ void layer_norm_kernel(const float* __restrict__ x, const float* __restrict__ weight,
                                  const float* __restrict__ bias, float* __restrict__ y,
                                  int64_t dim, float eps) {
  __shared__ float smem[kThreads];
  const int64_t base = static_cast<int64_t>(blockIdx.x) * dim;
  float local = 0.0f;
  for (int64_t c = threadIdx.x; c < dim; c += kThreads) local += x[base + c];
  const float mean = block_sum(local, smem) / static_cast<float>(dim);
  local = 0.0f;
  for (int64_t c = threadIdx.x; c < dim; c += kThreads) {
    const float d = x[base + c] - mean;
    local += d * d;
  }
  const float var = block_sum(local, smem) / static_cast<float>(dim - 1);
  const float rstd = 1.0f / sqrtf(var + eps);
  for (int64_t c = threadIdx.x; c < dim; c += kThreads)
    y[base + c] = (x[base + c] - mean) * rstd * weight[c] + bias[c];
}

torch::Tensor forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
  TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "layer_norm: GPU tensors expected");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32 &&
                  bias.scalar_type() == torch::kFloat32,
              "layer_norm: float32 expected");
  const int64_t dim = weight.numel();
  TORCH_CHECK(x.dim() >= 1 && x.size(-1) == dim && bias.numel() == dim,
              "layer_norm: last dimension must match weight and bias");
  const c10::DeviceGuard device_guard(x.device());
  const auto xc = x.contiguous();
  const auto wc = weight.contiguous();
  const auto bc = bias.contiguous();
  const int64_t rows = dim == 0 ? 0 : xc.numel() / dim;
  TORCH_CHECK(rows < (int64_t{1} << 31), "layer_norm: too many rows");
  auto out = torch::empty(xc.sizes(), xc.options());
  if (rows == 0) return out;
  hipStream_t stream = KV_CURRENT_STREAM();
  hipLaunchKernelGGL(layer_norm_kernel, dim3(static_cast<unsigned int>(rows)), dim3(kThreads), 0, stream,
                     xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(),
                     out.data_ptr<float>(), dim, 1e-5f);
  kv_check_launch("layer_norm");
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "layer_norm (HIP)"); }
