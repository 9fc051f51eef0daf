// Correct CUDA solution for suite/layer_norm.py (functional twin: x, weight, bias).
// One block of 256 threads per row. Each reduction is a warp shuffle tree, then one
// value per warp through shared memory. Two passes: the mean, then the biased variance
// of x - mean; eps 1e-5.
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>

constexpr int kThreads = 256;
constexpr int kWarp = 32;
constexpr int kWarps = kThreads / kWarp;

// Sum over the block; every thread must call it and receives the total.
__device__ float block_sum(float v, float* warp_totals) {
  for (int offset = kWarp / 2; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  if (lane == 0) warp_totals[warp] = v;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < kWarps; ++w) total += warp_totals[w];
  __syncthreads();  // all reads done before warp_totals is written again
  return total;
}

__global__ void layer_norm_kernel(const float* __restrict__ x, const float* __restrict__ weight,
                                  const float* __restrict__ bias, float* __restrict__ y,
                                  int64_t dim, float eps) {
  __shared__ float warp_totals[kWarps];
  const float* in = x + static_cast<int64_t>(blockIdx.x) * dim;
  float* out = y + static_cast<int64_t>(blockIdx.x) * dim;
  float s = 0.0f;
  for (int64_t c = threadIdx.x; c < dim; c += kThreads) s += in[c];
  const float mean = block_sum(s, warp_totals) / static_cast<float>(dim);
  float sq = 0.0f;
  for (int64_t c = threadIdx.x; c < dim; c += kThreads) {
    const float d = in[c] - mean;
    sq += d * d;
  }
  const float rstd = rsqrtf(block_sum(sq, warp_totals) / static_cast<float>(dim) + eps);
  for (int64_t c = threadIdx.x; c < dim; c += kThreads)
    out[c] = (in[c] - mean) * rstd * weight[c] + bias[c];
}

torch::Tensor forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
  TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "layer_norm: CUDA tensors expected");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32 &&
                  bias.scalar_type() == torch::kFloat32,
              "layer_norm: float32 expected");
  const int64_t dim = weight.numel();
  TORCH_CHECK(x.dim() >= 1 && x.size(-1) == dim && bias.numel() == dim,
              "layer_norm: last dimension must match weight and bias");
  const c10::cuda::CUDAGuard device_guard(x.device());
  const auto xc = x.contiguous();
  const auto wc = weight.contiguous();
  const auto bc = bias.contiguous();
  const int64_t rows = dim == 0 ? 0 : xc.numel() / dim;
  TORCH_CHECK(rows < (int64_t{1} << 31), "layer_norm: too many rows");
  auto out = torch::empty(xc.sizes(), xc.options());
  if (rows == 0) return out;
  layer_norm_kernel<<<static_cast<unsigned int>(rows), kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(), out.data_ptr<float>(), dim,
      1e-5f);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "layer_norm (CUDA)"); }
