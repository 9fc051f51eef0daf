#pragma once
// The lite extension build's stand-in for PyTorch's <ATen/OpMathType.h>: at::opmath_type
// of the lite build's types, PyTorch's table (float for Half and BFloat16).
#include "kvault_lite/api.h"

namespace at {
template <typename scalar_t>
struct OpMathType {
  using type = scalar_t;
};
template <>
struct OpMathType<Half> {
  using type = float;
};
template <>
struct OpMathType<BFloat16> {
  using type = float;
};
template <typename T>
using opmath_type = typename OpMathType<T>::type;
}  // namespace at
