#pragma once
// The lite extension build's stand-in for PyTorch's <ATen/AccumulateType.h>: at::acc_type
// of the lite build's types, PyTorch's table (c10::complex is none of them, and
// at::toAccumulateType is not declared: a source using either is built the full way).
#include "kvault_lite/api.h"

#if defined(__CUDACC__)
#include <cuda.h>
#include <cuda_fp16.h>
#endif

namespace at {
template <typename T, bool is_cuda>
struct AccumulateType {};
#define KVAULT_LITE_ACC(T, is_cuda, A) \
  template <>                          \
  struct AccumulateType<T, is_cuda> {  \
    using type = A;                    \
  };
#if defined(__CUDACC__)
KVAULT_LITE_ACC(half, true, float)
#endif
KVAULT_LITE_ACC(BFloat16, true, float)
KVAULT_LITE_ACC(Half, true, float)
KVAULT_LITE_ACC(float, true, float)
KVAULT_LITE_ACC(double, true, double)
KVAULT_LITE_ACC(int8_t, true, int64_t)
KVAULT_LITE_ACC(uint8_t, true, int64_t)
KVAULT_LITE_ACC(char, true, int64_t)
KVAULT_LITE_ACC(int16_t, true, int64_t)
KVAULT_LITE_ACC(int32_t, true, int64_t)
KVAULT_LITE_ACC(int64_t, true, int64_t)
KVAULT_LITE_ACC(bool, true, bool)
KVAULT_LITE_ACC(Half, false, float)
KVAULT_LITE_ACC(BFloat16, false, float)
KVAULT_LITE_ACC(float, false, double)
KVAULT_LITE_ACC(double, false, double)
KVAULT_LITE_ACC(int8_t, false, int64_t)
KVAULT_LITE_ACC(uint8_t, false, int64_t)
KVAULT_LITE_ACC(char, false, int64_t)
KVAULT_LITE_ACC(int16_t, false, int64_t)
KVAULT_LITE_ACC(int32_t, false, int64_t)
KVAULT_LITE_ACC(int64_t, false, int64_t)
KVAULT_LITE_ACC(bool, false, bool)
#undef KVAULT_LITE_ACC

template <typename T, bool is_cuda>
using acc_type = typename AccumulateType<T, is_cuda>::type;
}  // namespace at
