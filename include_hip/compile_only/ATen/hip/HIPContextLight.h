#pragma once
// KernelVault compile-only shim (see ../../README.md): at::hip device queries,
// declared only.
#include <cstdint>

#include <c10/hip/HIPException.h>
#include <c10/hip/HIPStream.h>

namespace at {
namespace hip {

hipDeviceProp_t* getCurrentDeviceProperties();
hipDeviceProp_t* getDeviceProperties(int64_t device);
int warp_size();
bool is_available();
int64_t getNumGPUs();

}  // namespace hip
}  // namespace at
