// WRONG on purpose (suite/row_sum.py): right values, wrong shape: returns [N, 1]
// (keepdim) where the reference returns [N].
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

__global__ void row_sum_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t cols) {
  __shared__ float smem[kThreads];
  const float* row = x + static_cast<int64_t>(blockIdx.x) * cols;
  float acc = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) acc += row[c];
  const float total = block_sum(acc, smem);
  if (threadIdx.x == 0) out[blockIdx.x] = total;
}

torch::Tensor forward(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda(), "row_sum: GPU tensor expected");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "row_sum: float32 expected");
  TORCH_CHECK(x.dim() >= 1, "row_sum: at least one dimension expected");
  const c10::DeviceGuard device_guard(x.device());
  const auto xc = x.contiguous();
  const int64_t cols = xc.size(-1);
  const int64_t rows = cols == 0 ? 0 : xc.numel() / cols;
  TORCH_CHECK(rows < (int64_t{1} << 31), "row_sum: too many rows");
  auto out_sizes = xc.sizes().vec();
  out_sizes.back() = 1;  // keepdim: [N, 1]
  auto out = torch::empty(out_sizes, xc.options());
  if (rows == 0) return out;
  hipStream_t stream = KV_CURRENT_STREAM();
  hipLaunchKernelGGL(row_sum_kernel, dim3(static_cast<unsigned int>(rows)), dim3(kThreads), 0, stream,
                     xc.data_ptr<float>(), out.data_ptr<float>(), cols);
  kv_check_launch("row_sum");
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "row_sum (HIP)"); }
