#pragma once
// KernelVault compile-only shim (see ../../README.md): declarations of PyTorch's HIP
// device and stream guards, shaped like a ROCm build of PyTorch.
#include <c10/hip/HIPStream.h>
#include <c10/util/Optional.h>

namespace c10 {
namespace hip {

class HIPGuard {
 public:
  explicit HIPGuard(DeviceIndex device_index);
  explicit HIPGuard(Device device);
  HIPGuard(const HIPGuard&) = delete;
  HIPGuard& operator=(const HIPGuard&) = delete;
  ~HIPGuard();
  void set_device(Device device);
  void reset_device(Device device);
  void set_index(DeviceIndex device_index);
  Device original_device() const;
  Device current_device() const;
};

class OptionalHIPGuard {
 public:
  OptionalHIPGuard();
  explicit OptionalHIPGuard(optional<Device> device_opt);
  explicit OptionalHIPGuard(optional<DeviceIndex> device_index_opt);
  OptionalHIPGuard(const OptionalHIPGuard&) = delete;
  OptionalHIPGuard& operator=(const OptionalHIPGuard&) = delete;
  ~OptionalHIPGuard();
  void set_device(Device device);
  void reset_device(Device device);
  void set_index(DeviceIndex device_index);
  optional<Device> original_device() const;
  optional<Device> current_device() const;
  void reset();
};

class HIPStreamGuard {
 public:
  explicit HIPStreamGuard(Stream stream);
  HIPStreamGuard(const HIPStreamGuard&) = delete;
  HIPStreamGuard& operator=(const HIPStreamGuard&) = delete;
  ~HIPStreamGuard();
  void reset_stream(Stream stream);
  HIPStream original_stream() const;
  HIPStream current_stream() const;
};

class OptionalHIPStreamGuard {
 public:
  OptionalHIPStreamGuard();
  explicit OptionalHIPStreamGuard(Stream stream);
  explicit OptionalHIPStreamGuard(optional<Stream> stream_opt);
  OptionalHIPStreamGuard(const OptionalHIPStreamGuard&) = delete;
  OptionalHIPStreamGuard& operator=(const OptionalHIPStreamGuard&) = delete;
  ~OptionalHIPStreamGuard();
  void reset_stream(Stream stream);
  void reset();
};

}  // namespace hip
}  // namespace c10
