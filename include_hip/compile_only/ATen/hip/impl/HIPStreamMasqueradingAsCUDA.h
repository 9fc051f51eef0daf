#pragma once
// KernelVault compile-only shim (see ../../../README.md): PyTorch's ROCm streams that
// report device type CUDA, declared only.
#include <c10/hip/HIPStream.h>

namespace c10 {
namespace hip {

class HIPStreamMasqueradingAsCUDA {
 public:
  explicit HIPStreamMasqueradingAsCUDA(Stream stream);
  explicit HIPStreamMasqueradingAsCUDA(HIPStream stream);
  operator hipStream_t() const;
  operator Stream() const;
  hipStream_t stream() const;
  DeviceIndex device_index() const;
  Device device() const;
  StreamId id() const;
  bool query() const;
  void synchronize() const;
  Stream unwrap() const;

 private:
  HIPStream stream_;
};

HIPStreamMasqueradingAsCUDA getCurrentHIPStreamMasqueradingAsCUDA(DeviceIndex device = -1);
HIPStreamMasqueradingAsCUDA getDefaultHIPStreamMasqueradingAsCUDA(DeviceIndex device = -1);
HIPStreamMasqueradingAsCUDA getStreamFromPoolMasqueradingAsCUDA(bool high_priority = false,
                                                                DeviceIndex device = -1);
void setCurrentHIPStreamMasqueradingAsCUDA(HIPStreamMasqueradingAsCUDA stream);

}  // namespace hip
}  // namespace c10
