#pragma once
// The lite extension build's ATen/cuda and c10/cuda names (kvault_lite/cuda.h under
// PyTorch's names) and PyTorch's CUDA error checks.
#include "api.h"
#include "cuda.h"

namespace c10 {
namespace cuda {
using ::kvault_lite::CUDAGuard;
using ::kvault_lite::CUDAStream;
using ::kvault_lite::OptionalCUDAGuard;
using ::kvault_lite::current_device;
using ::kvault_lite::getCurrentCUDAStream;
}  // namespace cuda
}  // namespace c10

namespace at {
using ::kvault_lite::device_of;
namespace cuda {
using namespace ::c10::cuda;  // NOLINT: as PyTorch's at::cuda takes c10::cuda's names
using ::kvault_lite::getCurrentCUDABlasHandle;
using ::kvault_lite::getCurrentDeviceProperties;
using ::kvault_lite::getDeviceProperties;
}  // namespace cuda
}  // namespace at

#define C10_CUDA_CHECK(expr)                                                        \
  do {                                                                              \
    const cudaError_t kvault_lite_err = (expr);                                     \
    if (kvault_lite_err != cudaSuccess)                                             \
      ::kvault_lite::CheckCuda(static_cast<int>(kvault_lite_err), __FILE__, __LINE__); \
  } while (0)
#define C10_CUDA_KERNEL_LAUNCH_CHECK() C10_CUDA_CHECK(cudaGetLastError())
#define AT_CUDA_CHECK(expr) C10_CUDA_CHECK(expr)
