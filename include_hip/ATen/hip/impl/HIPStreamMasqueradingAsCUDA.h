#pragma once
// KernelVault HIP-on-NVIDIA portability layer:
// <ATen/hip/impl/HIPStreamMasqueradingAsCUDA.h>. On ROCm these wrap HIP streams so
// they report device type CUDA; on NVIDIA they are simply the CUDA streams.
#include <c10/hip/HIPStream.h>

namespace c10 {
namespace hip {

using HIPStreamMasqueradingAsCUDA = c10::cuda::CUDAStream;

inline HIPStreamMasqueradingAsCUDA getCurrentHIPStreamMasqueradingAsCUDA(DeviceIndex device = -1) {
  return c10::cuda::getCurrentCUDAStream(device);
}
inline HIPStreamMasqueradingAsCUDA getDefaultHIPStreamMasqueradingAsCUDA(DeviceIndex device = -1) {
  return c10::cuda::getDefaultCUDAStream(device);
}
inline HIPStreamMasqueradingAsCUDA getStreamFromPoolMasqueradingAsCUDA(bool high_priority = false,
                                                                       DeviceIndex device = -1) {
  return c10::cuda::getStreamFromPool(high_priority, device);
}
inline void setCurrentHIPStreamMasqueradingAsCUDA(HIPStreamMasqueradingAsCUDA stream) {
  c10::cuda::setCurrentCUDAStream(stream);
}

}  // namespace hip
}  // namespace c10
