#pragma once
// KernelVault HIP-on-NVIDIA portability layer: <hip/hip_bfloat16.h>.
// HIP's older hip_bfloat16 struct maps to CUDA's __nv_bfloat16, which converts to and
// from float and has arithmetic operators. hip_bfloat16's static helpers
// (round_to_bfloat16 and friends) are not provided.
#include <hip/hip_bf16.h>

typedef __nv_bfloat16 hip_bfloat16;

__host__ __device__ inline hip_bfloat16 float_to_hip_bfloat16(float f) { return __float2bfloat16(f); }
__host__ __device__ inline float hip_bfloat16_to_float(hip_bfloat16 b) { return __bfloat162float(b); }
