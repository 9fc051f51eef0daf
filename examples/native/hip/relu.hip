// Native-format HIP solution for suite/relu.py: out = max(x, 0) (fp32). Portable: runs
// on AMD (hipcc) and on NVIDIA (nvcc + include_hip/).
#include <hip/hip_runtime.h>
#include <kvault/native.h>

__global__ void relu_kernel(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

extern "C" int kvault_forward(const kv_tensor* inputs, int num_inputs, const kv_scalar*, int,
                              kv_tensor* outputs, int num_outputs, void* stream) {
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].dtype != KV_FLOAT32) return 1;
  const int64_t n = inputs[0].numel;
  if (n == 0) return 0;
  hipLaunchKernelGGL(relu_kernel, dim3((unsigned)((n + 255) / 256)), dim3(256), 0,
                     (hipStream_t)stream, (const float*)inputs[0].data, (float*)outputs[0].data, n);
  return hipGetLastError() == hipSuccess ? 0 : 2;
}
