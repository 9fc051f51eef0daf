// Wrong on purpose: the bound n - 1 leaves the last element as the engine's NaN fill.
#include <cuda_runtime.h>
#include <kvault/native.h>

__global__ void add_kernel(const float* a, const float* b, float* out, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n - 1) out[i] = a[i] + b[i];
}

extern "C" int kvault_forward(const kv_tensor* inputs, int, const kv_scalar*, int,
                              kv_tensor* outputs, int, void* stream) {
  const int64_t n = outputs[0].numel;
  add_kernel<<<(unsigned)((n + 255) / 256), 256, 0, (cudaStream_t)stream>>>(
      (const float*)inputs[0].data, (const float*)inputs[1].data, (float*)outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
