#pragma once
// KernelVault HIP-on-NVIDIA portability layer: <ATen/hip/HIPContext.h>.
#include <ATen/hip/HIPContextLight.h>
#if __has_include(<ATen/cuda/CUDAContextLight.h>)
#include <ATen/cuda/CUDAContext.h>
#endif
