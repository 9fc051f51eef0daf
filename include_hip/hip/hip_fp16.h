#pragma once
// KernelVault HIP-on-NVIDIA portability layer: <hip/hip_fp16.h>. HIP's __half,
// __half2, __float2half, __half2float, __hadd, ... have the same names in CUDA.
#include <hip/hip_runtime.h>
#include <cuda_fp16.h>
