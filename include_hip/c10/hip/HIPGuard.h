#pragma once
// KernelVault HIP-on-NVIDIA portability layer: <c10/hip/HIPGuard.h>.
// The HIP device and stream guards are the CUDA ones.
#include <c10/cuda/CUDAGuard.h>
#include <c10/hip/HIPStream.h>

namespace c10 {
namespace hip {

using HIPGuard = c10::cuda::CUDAGuard;
using OptionalHIPGuard = c10::cuda::OptionalCUDAGuard;
using HIPStreamGuard = c10::cuda::CUDAStreamGuard;
using OptionalHIPStreamGuard = c10::cuda::OptionalCUDAStreamGuard;
using HIPMultiStreamGuard = c10::cuda::CUDAMultiStreamGuard;

}  // namespace hip
}  // namespace c10
