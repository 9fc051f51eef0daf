#pragma once
// The fast extension build's binding (docs/toolchains.md, "Fast extension builds"): the
// interface between a candidate compiled against this folder's light
// <torch/extension.h> and binding.cc, which is compiled once per toolchain with
// PyTorch's full headers and pybind11 and linked into every such candidate.
//
// The candidate's PYBIND11_MODULE body receives a kvault_ext::Module. Its def(name, f)
// and def(name, f, doc) record f with, per parameter, which C++ type it takes (Arg);
// the binding then loads each Python argument with pybind11's own caster of exactly
// that type and calls f through the Thunk, so a call converts as pybind11 would have.
// A parameter or return type outside the lists below, or any other use of the module
// object, does not compile, and the build falls back to the full headers.
//
// Both sides are compiled by the same compiler with the same flags (the build key
// holds both): the layout of the types below is shared, not a stable ABI.
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <ATen/core/ivalue.h>

struct _object;

namespace kvault_ext {

using PyObjectPtr = ::_object*;

// The C++ type of one parameter (references and const removed).
enum class Arg : int {
  kTensor = 1,             // at::Tensor
  kOptionalTensor = 2,     // c10::optional<at::Tensor>
  kTensorList = 3,         // std::vector<at::Tensor>
  kInt = 4,                // int
  kInt64 = 5,              // int64_t
  kDouble = 6,             // double
  kFloat = 7,              // float
  kBool = 8,               // bool
  kIntList = 9,            // std::vector<int64_t>
  kIntArrayRef = 10,       // at::IntArrayRef
  kString = 11,            // std::string
  kOptionalInt64 = 12,     // c10::optional<int64_t>
  kOptionalDouble = 13,    // c10::optional<double>
};

// Calls the recorded callable with args[i] pointing at a loaded value of the type
// args' Arg names, and stores what it returns in *result (None for void). Exceptions
// pass through to pybind11's translation, as from a pybind11-bound function.
using Thunk = void (*)(const void* callable, void* const* args, c10::IValue* result);

struct Function {
  std::string name;
  std::string doc;
  std::vector<Arg> args;
  Thunk thunk = nullptr;
  std::shared_ptr<const void> callable;
};

namespace detail {

template <class T, class = void>
struct ArgOf {
  static_assert(sizeof(T) == 0,
                "kvault fast extension build: a bound function's parameter type has no fast "
                "binding (the full build is used)");
};
template <> struct ArgOf<at::Tensor> { static constexpr Arg value = Arg::kTensor; };
template <> struct ArgOf<c10::optional<at::Tensor>> { static constexpr Arg value = Arg::kOptionalTensor; };
template <> struct ArgOf<std::vector<at::Tensor>> { static constexpr Arg value = Arg::kTensorList; };
template <> struct ArgOf<int> { static constexpr Arg value = Arg::kInt; };
template <> struct ArgOf<int64_t> { static constexpr Arg value = Arg::kInt64; };
template <> struct ArgOf<double> { static constexpr Arg value = Arg::kDouble; };
template <> struct ArgOf<float> { static constexpr Arg value = Arg::kFloat; };
template <> struct ArgOf<bool> { static constexpr Arg value = Arg::kBool; };
template <> struct ArgOf<std::vector<int64_t>> { static constexpr Arg value = Arg::kIntList; };
template <> struct ArgOf<at::IntArrayRef> { static constexpr Arg value = Arg::kIntArrayRef; };
template <> struct ArgOf<std::string> { static constexpr Arg value = Arg::kString; };
template <> struct ArgOf<c10::optional<int64_t>> { static constexpr Arg value = Arg::kOptionalInt64; };
template <> struct ArgOf<c10::optional<double>> { static constexpr Arg value = Arg::kOptionalDouble; };

template <class A>
using Bare = std::remove_cv_t<std::remove_reference_t<A>>;

// Return types whose Python value pybind11 would make the same way as the binding
// makes it from the c10::IValue: tensors, tuples of them, lists of tensors, numbers.
template <class R> struct Returnable : std::false_type {};
template <> struct Returnable<void> : std::true_type {};
template <> struct Returnable<at::Tensor> : std::true_type {};
template <> struct Returnable<std::vector<at::Tensor>> : std::true_type {};
template <> struct Returnable<int> : std::true_type {};
template <> struct Returnable<int64_t> : std::true_type {};
template <> struct Returnable<double> : std::true_type {};
template <> struct Returnable<float> : std::true_type {};
template <> struct Returnable<bool> : std::true_type {};
template <class... T> struct Returnable<std::tuple<T...>> : std::bool_constant<(Returnable<Bare<T>>::value && ...)> {};

// A by-value parameter is moved from the loaded value, as pybind11 does; a reference
// parameter refers to it.
template <class A>
A&& Pass(void* p) { return static_cast<A&&>(*static_cast<Bare<A>*>(p)); }

template <class C, class R, class... A>
struct Callable {
  static_assert(Returnable<Bare<R>>::value,
                "kvault fast extension build: a bound function's return type has no fast "
                "binding (the full build is used)");
  template <size_t... I>
  static void Call(const C& c, void* const* args, c10::IValue* result, std::index_sequence<I...>) {
    if constexpr (std::is_void_v<R>) {
      c(Pass<A>(args[I])...);
      *result = c10::IValue();
    } else {
      *result = c10::IValue(c(Pass<A>(args[I])...));
    }
  }
  static void Thunk(const void* callable, void* const* args, c10::IValue* result) {
    Call(*static_cast<const C*>(callable), args, result, std::index_sequence_for<A...>{});
  }
  static std::vector<Arg> Args() { return {ArgOf<Bare<A>>::value...}; }
};

template <class F, class = void>
struct Traits {
  static_assert(sizeof(F) == 0,
                "kvault fast extension build: m.def takes a function or a lambda here (the full "
                "build is used)");
};
template <class R, class... A>
struct Traits<R (*)(A...)> : Callable<R (*)(A...), R, A...> {};
template <class C, class R, class... A>
struct MemberTraits : Callable<C, R, A...> {};
template <class C, class R, class... A>
MemberTraits<C, R, A...> FromCall(R (C::*)(A...) const);
template <class C, class R, class... A>
MemberTraits<C, R, A...> FromCall(R (C::*)(A...));
template <class F>
struct Traits<F, std::void_t<decltype(&F::operator())>> : decltype(FromCall(&F::operator())) {};

}  // namespace detail

// What a candidate's PYBIND11_MODULE body sees as its module. Thread-compatible.
class Module {
 public:
  explicit Module(std::vector<Function>* out) : out_(out) {}

  template <class F>
  Module& def(const char* name, F&& f, const char* doc = "") {
    using Stored = std::decay_t<F>;
    using T = detail::Traits<Stored>;
    Function fn;
    fn.name = name;
    fn.doc = doc;
    fn.args = T::Args();
    fn.thunk = &T::Thunk;
    fn.callable = std::make_shared<const Stored>(std::forward<F>(f));
    out_->push_back(std::move(fn));
    return *this;
  }

 private:
  std::vector<Function>* out_;
};

using Body = void (*)(Module&);

// Defined in binding.cc: the extension module `name` (a new reference, or nullptr with
// a Python ImportError set), holding the functions `body` defines.
PyObjectPtr InitModule(const char* name, Body body);

}  // namespace kvault_ext
