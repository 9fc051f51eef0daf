#pragma once
// KernelVault HIP-on-NVIDIA portability layer: <c10/hip/HIPException.h>.
#include <c10/cuda/CUDAException.h>
#include <hip/hip_runtime.h>

#define C10_HIP_CHECK(expr) C10_CUDA_CHECK(expr)
#define C10_HIP_CHECK_WARN(expr) C10_CUDA_CHECK_WARN(expr)
#define C10_HIP_KERNEL_LAUNCH_CHECK() C10_CUDA_KERNEL_LAUNCH_CHECK()
