// Native-format CUDA solution for suite/layer_norm.py (twin arguments x, weight, bias):
// one block per row, two-pass mean and variance in shared memory (fp32).
#include <cuda_runtime.h>
#include <kvault/native.h>

constexpr int kThreads = 256;

__device__ float block_sum(float v, float* red) {
  red[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  float total = red[0];
  __syncthreads();
  return total;
}

__global__ void layer_norm_rows(const float* x, const float* w, const float* b, float* y,
                                int64_t dim) {
  __shared__ float red[kThreads];
  const float* in = x + blockIdx.x * dim;
  float* out = y + blockIdx.x * dim;
  float s = 0.f;
  for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) s += in[c];
  const float mean = block_sum(s, red) / dim;
  float q = 0.f;
  for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) q += (in[c] - mean) * (in[c] - mean);
  const float inv = rsqrtf(block_sum(q, red) / dim + 1e-5f);
  for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) out[c] = (in[c] - mean) * inv * w[c] + b[c];
}

extern "C" int kvault_forward(const kv_tensor* inputs, int num_inputs, const kv_scalar*, int,
                              kv_tensor* outputs, int num_outputs, void* stream) {
  if (num_inputs != 3 || num_outputs != 1) return 1;
  const int64_t dim = inputs[1].shape[0];
  const int64_t rows = dim == 0 ? 0 : inputs[0].numel / dim;
  if (rows == 0) return 0;
  layer_norm_rows<<<(unsigned)rows, kThreads, 0, (cudaStream_t)stream>>>(
      (const float*)inputs[0].data, (const float*)inputs[1].data, (const float*)inputs[2].data,
      (float*)outputs[0].data, dim);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
