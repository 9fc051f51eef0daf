#pragma once
// KernelVault compile-only shim (see ../../README.md): PyTorch's HIP error-check
// macros.
#include <c10/util/Exception.h>
#include <hip/hip_runtime.h>

#define C10_HIP_CHECK(expr)                                                      \
  do {                                                                           \
    const hipError_t kvault_hip_err_ = (expr);                                   \
    TORCH_CHECK(kvault_hip_err_ == hipSuccess, "HIP error: ",                    \
                hipGetErrorString(kvault_hip_err_));                             \
  } while (0)
#define C10_HIP_CHECK_WARN(expr) static_cast<void>(expr)
#define C10_HIP_KERNEL_LAUNCH_CHECK() C10_HIP_CHECK(hipGetLastError())
