#pragma once
// KernelVault HIP-on-NVIDIA portability layer:
// <ATen/hip/impl/HIPGuardImplMasqueradingAsCUDA.h>: the masquerading guards are the
// CUDA guards.
#include <ATen/hip/impl/HIPStreamMasqueradingAsCUDA.h>
#include <c10/hip/HIPGuard.h>

namespace c10 {
namespace hip {

using HIPGuardMasqueradingAsCUDA = c10::cuda::CUDAGuard;
using OptionalHIPGuardMasqueradingAsCUDA = c10::cuda::OptionalCUDAGuard;
using HIPStreamGuardMasqueradingAsCUDA = c10::cuda::CUDAStreamGuard;
using OptionalHIPStreamGuardMasqueradingAsCUDA = c10::cuda::OptionalCUDAStreamGuard;

}  // namespace hip
}  // namespace c10
