// Native-format CUDA solution for suite/vector_add.py: out = a + b (fp32).
#include <cuda_runtime.h>
#include <kvault/native.h>

#include <cstdio>

static char g_error[256];

extern "C" const char* kvault_last_error(void) { return g_error; }

__global__ void add_kernel(const float* a, const float* b, float* out, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}

extern "C" int kvault_forward(const kv_tensor* inputs, int num_inputs, const kv_scalar*, int,
                              kv_tensor* outputs, int num_outputs, void* stream) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  const int64_t n = outputs[0].numel;
  if (n == 0) return 0;
  add_kernel<<<(unsigned)((n + 255) / 256), 256, 0, (cudaStream_t)stream>>>(
      (const float*)inputs[0].data, (const float*)inputs[1].data, (float*)outputs[0].data, n);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    std::snprintf(g_error, sizeof g_error, "launch failed: %s", cudaGetErrorString(err));
    return 2;
  }
  return 0;
}
