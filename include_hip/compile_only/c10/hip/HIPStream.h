#pragma once
// KernelVault compile-only shim (see ../../README.md): declarations of PyTorch's
// c10::hip stream API, shaped like a ROCm build of PyTorch. Not defined anywhere:
// code using it compiles but never links.
#include <hip/hip_runtime.h>
#include <c10/core/Device.h>
#include <c10/core/Stream.h>

namespace c10 {
namespace hip {

class HIPStream {
 public:
  explicit HIPStream(Stream stream);
  operator hipStream_t() const;
  operator Stream() const;
  hipStream_t stream() const;
  DeviceIndex device_index() const;
  Device device() const;
  StreamId id() const;
  bool query() const;
  void synchronize() const;
  int priority() const;
  Stream unwrap() const;

 private:
  Stream stream_;
};

HIPStream getCurrentHIPStream(DeviceIndex device_index = -1);
HIPStream getDefaultHIPStream(DeviceIndex device_index = -1);
HIPStream getStreamFromPool(bool isHighPriority = false, DeviceIndex device = -1);
void setCurrentHIPStream(HIPStream stream);

}  // namespace hip
}  // namespace c10

namespace at {
namespace hip {
using namespace c10::hip;
}  // namespace hip
}  // namespace at
