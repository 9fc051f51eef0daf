#pragma once
// KernelVault HIP-on-NVIDIA portability layer: <c10/hip/HIPStream.h>.
// On ROCm, PyTorch's HIP streams live in c10::hip (and at::hip). Here they are the
// CUDA streams of a CUDA build of PyTorch: HIPStream is c10::cuda::CUDAStream.
#include <hip/hip_runtime.h>
#include <c10/cuda/CUDAStream.h>

namespace c10 {
namespace hip {

using HIPStream = c10::cuda::CUDAStream;
using c10::cuda::getStreamFromPool;

inline HIPStream getCurrentHIPStream(DeviceIndex device_index = -1) {
  return c10::cuda::getCurrentCUDAStream(device_index);
}
inline HIPStream getDefaultHIPStream(DeviceIndex device_index = -1) {
  return c10::cuda::getDefaultCUDAStream(device_index);
}
inline void setCurrentHIPStream(HIPStream stream) { c10::cuda::setCurrentCUDAStream(stream); }

}  // namespace hip
}  // namespace c10

namespace at {
namespace hip {
using namespace c10::hip;
}  // namespace hip
}  // namespace at
