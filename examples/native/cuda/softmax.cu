// Native-format CUDA solution for suite/softmax.py: one block per row, shared-memory
// max and sum reductions (fp32).
#include <cuda_runtime.h>
#include <kvault/native.h>

#include <cfloat>

constexpr int kThreads = 256;

__global__ void softmax_rows(const float* x, float* y, int64_t cols) {
  __shared__ float red[kThreads];
  const float* in = x + blockIdx.x * cols;
  float* out = y + blockIdx.x * cols;
  float m = -FLT_MAX;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, in[c]);
  red[threadIdx.x] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();
  float sum = 0.f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += __expf(in[c] - m);
  red[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  const float inv = 1.f / red[0];
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) out[c] = expf(in[c] - m) * inv;
}

extern "C" int kvault_forward(const kv_tensor* inputs, int num_inputs, const kv_scalar*, int,
                              kv_tensor* outputs, int num_outputs, void* stream) {
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].ndim < 1) return 1;
  const int64_t cols = inputs[0].shape[inputs[0].ndim - 1];
  const int64_t rows = cols == 0 ? 0 : inputs[0].numel / cols;
  if (rows == 0) return 0;
  softmax_rows<<<(unsigned)rows, kThreads, 0, (cudaStream_t)stream>>>(
      (const float*)inputs[0].data, (float*)outputs[0].data, cols);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
