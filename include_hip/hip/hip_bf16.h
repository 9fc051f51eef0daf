#pragma once
// KernelVault HIP-on-NVIDIA portability layer: <hip/hip_bf16.h>.
// __hip_bfloat16 / __hip_bfloat162 are CUDA's __nv_bfloat16 / __nv_bfloat162; the
// conversion functions (__float2bfloat16, __bfloat162float, __floats2bfloat162_rn,
// ...) have the same names in CUDA.
#include <hip/hip_runtime.h>
#include <cuda_bf16.h>

typedef __nv_bfloat16 __hip_bfloat16;
typedef __nv_bfloat162 __hip_bfloat162;
