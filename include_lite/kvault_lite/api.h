#pragma once
// What the lite extension build's <torch/extension.h> gives a candidate (docs/
// toolchains.md, "The lite extension build"): kvault_lite's tensor API under PyTorch's
// names in at::, torch:: and c10::, PyTorch's checking and dispatch macros, and
// PYBIND11_MODULE recording the module's functions for lite.cc. A name PyTorch has
// and this header lacks does not compile, and the full build is used.
#include "module.h"
#include "parallel.h"
#include "tensor.h"

// What PyTorch's <torch/extension.h> brings in on the way, which model-written files
// use without including it themselves (FLT_MAX, std::runtime_error, std::min, ...).
#include <algorithm>
#include <array>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#ifdef KVAULT_LITE_HALF
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#endif

namespace c10 {
using ::kvault_lite::Device;
using ::kvault_lite::DeviceType;
using ::kvault_lite::IntArrayRef;
using ::kvault_lite::Scalar;
using ::kvault_lite::ScalarType;
using ::kvault_lite::TensorOptions;
template <class T>
using optional = std::optional<T>;
using std::nullopt;
using std::make_optional;
using ::kvault_lite::toString;
// c10/core/ScalarTypeToTypeMeta.h's conversions.
inline ::kvault_lite::TypeMeta scalarTypeToTypeMeta(ScalarType t) { return ::kvault_lite::TypeMeta::fromScalarType(t); }
inline ScalarType typeMetaToScalarType(::kvault_lite::TypeMeta m) { return m.toScalarType(); }
template <class... A>
std::string str(const A&... a) { return ::kvault_lite::Str(a...); }
#define KVAULT_LITE_CONSTANT(name, value) constexpr ScalarType name = ScalarType::value;
KVAULT_LITE_CONSTANT(kByte, Byte)
KVAULT_LITE_CONSTANT(kChar, Char)
KVAULT_LITE_CONSTANT(kShort, Short)
KVAULT_LITE_CONSTANT(kInt, Int)
KVAULT_LITE_CONSTANT(kLong, Long)
KVAULT_LITE_CONSTANT(kHalf, Half)
KVAULT_LITE_CONSTANT(kFloat, Float)
KVAULT_LITE_CONSTANT(kDouble, Double)
KVAULT_LITE_CONSTANT(kBool, Bool)
KVAULT_LITE_CONSTANT(kBFloat16, BFloat16)
#undef KVAULT_LITE_CONSTANT
constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;
}  // namespace c10

namespace at {
using ::c10::BFloat16;
using ::c10::Half;
using ::kvault_lite::Device;
using ::kvault_lite::DeviceType;
using ::kvault_lite::IntArrayRef;
using ::kvault_lite::Scalar;
using ::kvault_lite::ScalarType;
using ::kvault_lite::Tensor;
using ::kvault_lite::TensorOptions;
using ::kvault_lite::DefaultPtrTraits;
using ::kvault_lite::GenericPackedTensorAccessor;
using ::kvault_lite::PackedTensorAccessor32;
using ::kvault_lite::PackedTensorAccessor64;
using ::kvault_lite::RestrictPtrTraits;
using ::kvault_lite::TensorAccessor;
using ::c10::kBFloat16;
using ::c10::kBool;
using ::c10::kByte;
using ::c10::kChar;
using ::c10::kCPU;
using ::c10::kCUDA;
using ::c10::kDouble;
using ::c10::kFloat;
using ::c10::kHalf;
using ::c10::kInt;
using ::c10::kLong;
using ::c10::kShort;
using ::kvault_lite::empty;
using ::kvault_lite::empty_like;
using ::kvault_lite::empty_strided;
using ::kvault_lite::full;
using ::kvault_lite::full_like;
using ::kvault_lite::sqrt;
using ::kvault_lite::rsqrt;
using ::kvault_lite::exp;
using ::kvault_lite::abs;
using ::kvault_lite::relu;
using ::kvault_lite::mean;
using ::kvault_lite::sum;
using ::kvault_lite::tanh;
using ::kvault_lite::sigmoid;
using ::kvault_lite::log;
using ::kvault_lite::clamp;
using ::kvault_lite::softmax;
using ::kvault_lite::log_softmax;
using ::kvault_lite::matmul;
using ::kvault_lite::mm;
using ::kvault_lite::bmm;
using ::kvault_lite::addmm;
using ::kvault_lite::cat;
using ::kvault_lite::stack;
using ::kvault_lite::linear;
using ::kvault_lite::conv2d;
using ::kvault_lite::conv_transpose2d;
using ::kvault_lite::conv1d;
using ::kvault_lite::conv3d;
using ::kvault_lite::conv_transpose1d;
using ::kvault_lite::conv_transpose3d;
using ::kvault_lite::max_pool2d;
using ::kvault_lite::avg_pool2d;
using ::kvault_lite::adaptive_avg_pool2d;
using ::kvault_lite::batch_norm;
using ::kvault_lite::layer_norm;
using ::kvault_lite::group_norm;
using ::kvault_lite::gelu;
using ::kvault_lite::DeprecatedTypeProperties;
template <class T>
using optional = std::optional<T>;
using std::nullopt;
using ::kvault_lite::ones;
using ::kvault_lite::ones_like;
using ::kvault_lite::zeros;
using ::kvault_lite::zeros_like;
using ::kvault_lite::dtype;
using ::kvault_lite::device;
using ::kvault_lite::get_num_threads;
using ::kvault_lite::get_thread_num;
using ::kvault_lite::in_parallel_region;
using ::kvault_lite::parallel_for;
using ::c10::toString;
}  // namespace at

namespace at {
constexpr ::c10::ScalarType kUInt8 = ::c10::kByte;
constexpr ::c10::ScalarType kInt8 = ::c10::kChar;
constexpr ::c10::ScalarType kInt16 = ::c10::kShort;
constexpr ::c10::ScalarType kInt32 = ::c10::kInt;
constexpr ::c10::ScalarType kInt64 = ::c10::kLong;
constexpr ::c10::ScalarType kFloat16 = ::c10::kHalf;
constexpr ::c10::ScalarType kFloat32 = ::c10::kFloat;
constexpr ::c10::ScalarType kFloat64 = ::c10::kDouble;
}  // namespace at

namespace caffe2 {
using ::kvault_lite::TypeMeta;
}  // namespace caffe2

namespace torch {
using namespace ::at;  // NOLINT: PyTorch's torch:: holds at::'s tensor API too
using Dtype = ::at::ScalarType;
// load_inline's bindings wrap each function so that PyTorch's errors reach Python as
// PyTorch raises them; here the function is bound as it is, and an error it throws
// reaches Python as a RuntimeError with its message.
template <class F>
F wrap_pybind_function(F f) {
  return f;
}
}  // namespace torch

// pybind11's names a PYBIND11_MODULE body uses: py::arg annotations (module.h) and
// py::none() as a default. PyTorch's <torch/extension.h> defines the alias py.
namespace pybind11 {
using arg = ::kvault_lite::NamedArg;
using none = ::kvault_lite::NoneValue;
}  // namespace pybind11
namespace py = pybind11;

// PyTorch's checks: a c10::Error with the message, or with the condition when there is
// none.
#define TORCH_CHECK(cond, ...)                                                                \
  do {                                                                                        \
    if (!(cond)) ::kvault_lite::Fail(__FILE__, __LINE__, #cond, ::kvault_lite::Str(__VA_ARGS__)); \
  } while (0)
#define TORCH_INTERNAL_ASSERT(cond, ...) TORCH_CHECK(cond, __VA_ARGS__)
#define AT_ASSERT(cond, ...) TORCH_CHECK(cond, __VA_ARGS__)
#define AT_ASSERTM(cond, ...) TORCH_CHECK(cond, __VA_ARGS__)
#define AT_ERROR(...) ::kvault_lite::Fail(__FILE__, __LINE__, "", ::kvault_lite::Str(__VA_ARGS__))
// The checks that raise Python's ValueError, IndexError, TypeError and
// NotImplementedError (with a message: PyTorch 1.13's do not compile without one), and
// PyTorch's warnings (a UserWarning; _ONCE: once per place).
#define KVAULT_LITE_CHECK_AS(kind, cond, ...)                                                      \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      ::kvault_lite::Fail(__FILE__, __LINE__, #cond, ::kvault_lite::StrOfSome(__VA_ARGS__),        \
                          ::kvault_lite::FailKind::kind);                                           \
  } while (0)
#define TORCH_CHECK_VALUE(cond, ...) KVAULT_LITE_CHECK_AS(kValue, cond, __VA_ARGS__)
#define TORCH_CHECK_INDEX(cond, ...) KVAULT_LITE_CHECK_AS(kIndex, cond, __VA_ARGS__)
#define TORCH_CHECK_TYPE(cond, ...) KVAULT_LITE_CHECK_AS(kType, cond, __VA_ARGS__)
#define TORCH_CHECK_NOT_IMPLEMENTED(cond, ...) KVAULT_LITE_CHECK_AS(kNotImplemented, cond, __VA_ARGS__)
#define TORCH_WARN(...) ::kvault_lite::Warn(::kvault_lite::Str(__VA_ARGS__))
#define TORCH_WARN_ONCE(...)                                                                          \
  do {                                                                                                \
    [[maybe_unused]] static const bool kvault_lite_warned = (TORCH_WARN(__VA_ARGS__), true);          \
  } while (0)

// PyTorch's dispatch macros: `scalar_t` is the C++ type of TYPE (a ScalarType) in the
// body, a lambda; a type outside the list is an error naming NAME, as PyTorch's.
#define KVAULT_LITE_CASE(st, ...)                                            \
  case (st): {                                                              \
    using scalar_t [[maybe_unused]] = typename ::kvault_lite::CppTypeOf<(st)>::type; \
    return __VA_ARGS__();                                                   \
  }
#define KVAULT_LITE_DISPATCH(TYPE, NAME, ...)                                \
  [&] {                                                                     \
    const ::kvault_lite::ScalarType kvault_lite_st = ::kvault_lite::DispatchType(TYPE);  \
    switch (kvault_lite_st) {                                               \
      __VA_ARGS__                                                           \
      default:                                                              \
        AT_ERROR('"', NAME, "\" not implemented for '", kvault_lite_st, "'"); \
    }                                                                       \
  }()
#define KVAULT_LITE_FLOATING(...)                                 \
  KVAULT_LITE_CASE(::kvault_lite::ScalarType::Double, __VA_ARGS__) \
  KVAULT_LITE_CASE(::kvault_lite::ScalarType::Float, __VA_ARGS__)
#define KVAULT_LITE_INTEGRAL(...)                                 \
  KVAULT_LITE_CASE(::kvault_lite::ScalarType::Byte, __VA_ARGS__)   \
  KVAULT_LITE_CASE(::kvault_lite::ScalarType::Char, __VA_ARGS__)   \
  KVAULT_LITE_CASE(::kvault_lite::ScalarType::Int, __VA_ARGS__)    \
  KVAULT_LITE_CASE(::kvault_lite::ScalarType::Long, __VA_ARGS__)   \
  KVAULT_LITE_CASE(::kvault_lite::ScalarType::Short, __VA_ARGS__)

#define AT_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) \
  KVAULT_LITE_DISPATCH(TYPE, NAME, KVAULT_LITE_FLOATING(__VA_ARGS__))
#define AT_DISPATCH_FLOATING_TYPES_AND_HALF(TYPE, NAME, ...)  \
  KVAULT_LITE_DISPATCH(TYPE, NAME, KVAULT_LITE_FLOATING(__VA_ARGS__) \
                       KVAULT_LITE_CASE(::kvault_lite::ScalarType::Half, __VA_ARGS__))
#define AT_DISPATCH_FLOATING_TYPES_AND(T1, TYPE, NAME, ...) \
  KVAULT_LITE_DISPATCH(TYPE, NAME, KVAULT_LITE_FLOATING(__VA_ARGS__) KVAULT_LITE_CASE(T1, __VA_ARGS__))
#define AT_DISPATCH_FLOATING_TYPES_AND2(T1, T2, TYPE, NAME, ...)                                  \
  KVAULT_LITE_DISPATCH(TYPE, NAME, KVAULT_LITE_FLOATING(__VA_ARGS__) KVAULT_LITE_CASE(T1, __VA_ARGS__) \
                                       KVAULT_LITE_CASE(T2, __VA_ARGS__))
#define AT_DISPATCH_REDUCED_FLOATING_TYPES(TYPE, NAME, ...)                        \
  KVAULT_LITE_DISPATCH(TYPE, NAME, KVAULT_LITE_CASE(::kvault_lite::ScalarType::Half, __VA_ARGS__) \
                                       KVAULT_LITE_CASE(::kvault_lite::ScalarType::BFloat16, __VA_ARGS__))
#define AT_DISPATCH_FLOATING_TYPES_AND3(T1, T2, T3, TYPE, NAME, ...)                              \
  KVAULT_LITE_DISPATCH(TYPE, NAME, KVAULT_LITE_FLOATING(__VA_ARGS__) KVAULT_LITE_CASE(T1, __VA_ARGS__) \
                                       KVAULT_LITE_CASE(T2, __VA_ARGS__) KVAULT_LITE_CASE(T3, __VA_ARGS__))
#define AT_DISPATCH_INTEGRAL_TYPES_AND(T1, TYPE, NAME, ...) \
  KVAULT_LITE_DISPATCH(TYPE, NAME, KVAULT_LITE_INTEGRAL(__VA_ARGS__) KVAULT_LITE_CASE(T1, __VA_ARGS__))
#define AT_DISPATCH_INTEGRAL_TYPES(TYPE, NAME, ...) \
  KVAULT_LITE_DISPATCH(TYPE, NAME, KVAULT_LITE_INTEGRAL(__VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES(TYPE, NAME, ...) \
  KVAULT_LITE_DISPATCH(TYPE, NAME, KVAULT_LITE_INTEGRAL(__VA_ARGS__) KVAULT_LITE_FLOATING(__VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES_AND(T1, TYPE, NAME, ...)                                        \
  KVAULT_LITE_DISPATCH(TYPE, NAME, KVAULT_LITE_INTEGRAL(__VA_ARGS__) KVAULT_LITE_FLOATING(__VA_ARGS__) \
                                       KVAULT_LITE_CASE(T1, __VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES_AND2(T1, T2, TYPE, NAME, ...)                                   \
  KVAULT_LITE_DISPATCH(TYPE, NAME, KVAULT_LITE_INTEGRAL(__VA_ARGS__) KVAULT_LITE_FLOATING(__VA_ARGS__) \
                                       KVAULT_LITE_CASE(T1, __VA_ARGS__) KVAULT_LITE_CASE(T2, __VA_ARGS__))

#define AT_DISPATCH_ALL_TYPES_AND3(T1, T2, T3, TYPE, NAME, ...)                                  \
  KVAULT_LITE_DISPATCH(TYPE, NAME, KVAULT_LITE_INTEGRAL(__VA_ARGS__) KVAULT_LITE_FLOATING(__VA_ARGS__) \
                                       KVAULT_LITE_CASE(T1, __VA_ARGS__) KVAULT_LITE_CASE(T2, __VA_ARGS__) \
                                       KVAULT_LITE_CASE(T3, __VA_ARGS__))

// The dispatch macros' newer form: AT_DISPATCH_SWITCH over AT_DISPATCH_CASE lists.
#define AT_DISPATCH_SWITCH(TYPE, NAME, ...) KVAULT_LITE_DISPATCH(TYPE, NAME, __VA_ARGS__)
#define AT_DISPATCH_CASE(st, ...) KVAULT_LITE_CASE(st, __VA_ARGS__)
#define AT_DISPATCH_CASE_FLOATING_TYPES(...) KVAULT_LITE_FLOATING(__VA_ARGS__)
#define AT_DISPATCH_CASE_FLOATING_TYPES_AND_HALF(...) \
  KVAULT_LITE_FLOATING(__VA_ARGS__) KVAULT_LITE_CASE(::kvault_lite::ScalarType::Half, __VA_ARGS__)
#define AT_DISPATCH_CASE_FLOATING_TYPES_AND(T1, ...) KVAULT_LITE_FLOATING(__VA_ARGS__) KVAULT_LITE_CASE(T1, __VA_ARGS__)
#define AT_DISPATCH_CASE_FLOATING_TYPES_AND2(T1, T2, ...) \
  KVAULT_LITE_FLOATING(__VA_ARGS__) KVAULT_LITE_CASE(T1, __VA_ARGS__) KVAULT_LITE_CASE(T2, __VA_ARGS__)
#define AT_DISPATCH_CASE_INTEGRAL_TYPES(...) KVAULT_LITE_INTEGRAL(__VA_ARGS__)
#define AT_DISPATCH_CASE_INTEGRAL_TYPES_AND(T1, ...) KVAULT_LITE_INTEGRAL(__VA_ARGS__) KVAULT_LITE_CASE(T1, __VA_ARGS__)
#define AT_DISPATCH_CASE_ALL_TYPES(...) KVAULT_LITE_INTEGRAL(__VA_ARGS__) KVAULT_LITE_FLOATING(__VA_ARGS__)
#define AT_DISPATCH_CASE_ALL_TYPES_AND(T1, ...) AT_DISPATCH_CASE_ALL_TYPES(__VA_ARGS__) KVAULT_LITE_CASE(T1, __VA_ARGS__)
#define AT_DISPATCH_CASE_ALL_TYPES_AND2(T1, T2, ...) \
  AT_DISPATCH_CASE_ALL_TYPES(__VA_ARGS__) KVAULT_LITE_CASE(T1, __VA_ARGS__) KVAULT_LITE_CASE(T2, __VA_ARGS__)

#define KVAULT_LITE_CAT2(a, b) a##b
#define KVAULT_LITE_CAT(a, b) KVAULT_LITE_CAT2(a, b)
#define KVAULT_LITE_STR2(x) #x
#define KVAULT_LITE_STR(x) KVAULT_LITE_STR2(x)

#define PYBIND11_MODULE(name, variable)                                                        \
  static void KVAULT_LITE_CAT(kvault_lite_body_, name)(::kvault_lite::Module&);                \
  extern "C" __attribute__((visibility("default"))) ::kvault_lite::PyObjectPtr KVAULT_LITE_CAT( \
      PyInit_, name)() {                                                                       \
    return ::kvault_lite::InitModule(KVAULT_LITE_STR(name), &KVAULT_LITE_CAT(kvault_lite_body_, name)); \
  }                                                                                            \
  void KVAULT_LITE_CAT(kvault_lite_body_, name)(::kvault_lite::Module & (variable))
