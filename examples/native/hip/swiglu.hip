// Native-format HIP solution for suite/swiglu.py: silu(gate) * up on bf16 (raw 16-bit
// values), fp32 math, one round-to-nearest-even at the end.
#include <hip/hip_runtime.h>
#include <kvault/native.h>

__device__ float bf16_to_float(uint16_t v) { return __uint_as_float(static_cast<uint32_t>(v) << 16); }

__device__ uint16_t float_to_bf16(float f) {
  uint32_t u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

__global__ void swiglu_kernel(const uint16_t* g, const uint16_t* u, uint16_t* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float gv = bf16_to_float(g[i]);
  y[i] = float_to_bf16(gv / (1.f + expf(-gv)) * bf16_to_float(u[i]));
}

extern "C" int kvault_forward(const kv_tensor* inputs, int num_inputs, const kv_scalar*, int,
                              kv_tensor* outputs, int num_outputs, void* stream) {
  if (num_inputs != 2 || num_outputs != 1 || inputs[0].dtype != KV_BFLOAT16) return 1;
  const int64_t n = outputs[0].numel;
  if (n == 0) return 0;
  hipLaunchKernelGGL(swiglu_kernel, dim3((unsigned)((n + 255) / 256)), dim3(256), 0,
                     (hipStream_t)stream, (const uint16_t*)inputs[0].data,
                     (const uint16_t*)inputs[1].data, (uint16_t*)outputs[0].data, n);
  return hipGetLastError() == hipSuccess ? 0 : 2;
}
