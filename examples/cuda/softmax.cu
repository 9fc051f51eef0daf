// Correct CUDA solution for suite/softmax.py: softmax over the last dimension (fp32).
// One 32-lane warp per row (CUDA's warp size, fixed here because this file is CUDA
// only); the maximum and the sum are combined with butterfly shuffles, so every lane
// ends with the row's values and no shared memory is needed.
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>

constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 8;

__device__ __forceinline__ float warp_max(float v) {
  for (int offset = kWarp / 2; offset > 0; offset >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__global__ void softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t rows,
                               int64_t cols) {
  const int lane = threadIdx.x % kWarp;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp;
  if (row >= rows) return;  // the whole warp leaves together, so the shuffles stay full
  const float* in = x + row * cols;
  float* out = y + row * cols;
  float m = -INFINITY;
  for (int64_t c = lane; c < cols; c += kWarp) m = fmaxf(m, in[c]);
  m = warp_max(m);
  float s = 0.0f;
  for (int64_t c = lane; c < cols; c += kWarp) s += __expf(in[c] - m);
  const float inv = 1.0f / warp_sum(s);
  for (int64_t c = lane; c < cols; c += kWarp) out[c] = __expf(in[c] - m) * inv;
}

torch::Tensor forward(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda(), "softmax: CUDA tensor expected");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "softmax: float32 expected");
  TORCH_CHECK(x.dim() >= 1, "softmax: at least one dimension expected");
  const c10::cuda::CUDAGuard device_guard(x.device());
  const auto xc = x.contiguous();
  const int64_t cols = xc.size(-1);
  const int64_t rows = cols == 0 ? 0 : xc.numel() / cols;
  auto out = torch::empty(xc.sizes(), xc.options());
  if (rows == 0) return out;
  const int64_t blocks = (rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
  TORCH_CHECK(blocks < (int64_t{1} << 31), "softmax: too many rows");
  softmax_kernel<<<static_cast<unsigned int>(blocks), kWarp * kWarpsPerBlock, 0,
                   at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), out.data_ptr<float>(),
                                                       rows, cols);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "softmax (CUDA)"); }
