#pragma once
// KernelVault HIP-on-NVIDIA portability layer: <ATen/hip/HIPContextLight.h>.
// at::hip device queries on a CUDA build of PyTorch. getDeviceProperties returns
// HIP-shaped properties (hip/hip_runtime_api.h), read once per device and kept.
#include <cstdint>
#include <mutex>

#include <hip/hip_runtime.h>
#if __has_include(<ATen/cuda/CUDAContextLight.h>)
#include <ATen/cuda/CUDAContextLight.h>
#else
#include <ATen/cuda/CUDAContext.h>
#endif
#include <c10/cuda/CUDAFunctions.h>
#include <c10/hip/HIPException.h>
#include <c10/hip/HIPStream.h>

namespace at {
namespace hip {

inline hipDeviceProp_t* getDeviceProperties(int64_t device) {
  constexpr int64_t kMaxDevices = 64;
  static std::once_flag once[kMaxDevices];
  static hipDeviceProp_t props[kMaxDevices];
  TORCH_CHECK(device >= 0 && device < kMaxDevices, "device index out of range: ", device);
  std::call_once(once[device], [device] {
    C10_HIP_CHECK(hipGetDeviceProperties(&props[device], static_cast<int>(device)));
  });
  return &props[device];
}

inline hipDeviceProp_t* getCurrentDeviceProperties() {
  return getDeviceProperties(c10::cuda::current_device());
}

inline int warp_size() { return getCurrentDeviceProperties()->warpSize; }

}  // namespace hip
}  // namespace at
