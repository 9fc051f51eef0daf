// Wrong on purpose: abs instead of relu.
#include <hip/hip_runtime.h>
#include <kvault/native.h>

__global__ void abs_kernel(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = fabsf(x[i]);
}

extern "C" int kvault_forward(const kv_tensor* inputs, int, const kv_scalar*, int,
                              kv_tensor* outputs, int, void* stream) {
  const int64_t n = inputs[0].numel;
  hipLaunchKernelGGL(abs_kernel, dim3((unsigned)((n + 255) / 256)), dim3(256), 0,
                     (hipStream_t)stream, (const float*)inputs[0].data, (float*)outputs[0].data, n);
  return hipGetLastError() == hipSuccess ? 0 : 2;
}
