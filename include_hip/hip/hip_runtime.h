#pragma once
// KernelVault HIP-on-NVIDIA portability layer: <hip/hip_runtime.h>.
// Host API from hip_runtime_api.h; device-side HIP spellings from
// kvault_device_functions.h. threadIdx/blockIdx/blockDim/gridDim, __syncthreads,
// __shared__, atomics, math intrinsics and <<<...>>> launches are CUDA's own.
#include <hip/hip_runtime_api.h>

#include <cuda_runtime.h>
// Included before the shuffle macros below are defined, so that CUDA's own
// (deprecated) half-precision __shfl declarations keep their names.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#if defined(__CUDACC__)
#include <hip/kvault_device_functions.h>
#endif
