#pragma once
// The lite extension build's module (docs/toolchains.md, "The lite extension build"):
// a candidate's PYBIND11_MODULE body receives a kvault_lite::Module, whose def(name, f)
// and def(name, f, doc) record f with, per parameter, the C++ type it takes. lite.cc
// (compiled once with pybind11 and PyTorch) loads each Python argument with pybind11's
// caster of the PyTorch type of the same name, hands f the lite value and turns f's
// result into what pybind11 would have returned. A parameter or return type outside
// the lists below, or any other use of the module object, does not compile, and the
// full build is used.
//
// The candidate and lite.cc are compiled against this header with the same standard
// library and flags (the build key holds both): the layout is shared, not an ABI.
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensor.h"

struct _object;

namespace kvault_lite {

using PyObjectPtr = ::_object*;

// The C++ type of one parameter (references and const removed).
enum class Arg : int {
  kTensor = 1,             // Tensor
  kOptionalTensor = 2,     // std::optional<Tensor>
  kTensorList = 3,         // std::vector<Tensor>
  kInt = 4,                // int
  kInt64 = 5,              // int64_t
  kDouble = 6,             // double
  kFloat = 7,              // float
  kBool = 8,               // bool
  kIntList = 9,            // std::vector<int64_t>
  kIntArrayRef = 10,       // IntArrayRef
  kString = 11,            // std::string
  kOptionalInt64 = 12,     // std::optional<int64_t>
  kOptionalDouble = 13,    // std::optional<double>
  kUInt = 14,              // unsigned int
  kUInt64 = 15,            // uint64_t (size_t)
  kLongLong = 16,          // long long, where it is not int64_t
  kULongLong = 17,         // unsigned long long, where it is not uint64_t
  kIntPair = 18,           // std::tuple<int, int>
  kIntTriple = 19,         // std::tuple<int, int, int>
  kInt64Pair = 20,         // std::tuple<int64_t, int64_t>
  kInt64Triple = 21,       // std::tuple<int64_t, int64_t, int64_t>
  kIntVector = 22,         // std::vector<int>
  kFloatVector = 23,       // std::vector<float>
  kDoubleVector = 24,      // std::vector<double>
};

// What a bound function returned, for lite.cc to convert as pybind11 would.
struct Value {
  enum class Kind { kNone, kTensor, kTensorList, kInt, kDouble, kBool, kString, kTuple, kList };
  Kind kind = Kind::kNone;
  Tensor tensor;
  std::vector<Tensor> tensors;
  int64_t i = 0;
  double d = 0;
  bool b = false;
  std::string s;
  std::vector<Value> items;  // kTuple, kList
};

// Calls the recorded callable with args[i] pointing at a value of the type args' Arg
// names, and stores what it returns in *result. Exceptions pass through to pybind11's
// translation, as from a pybind11-bound function.
using Thunk = void (*)(const void* callable, void* const* args, Value* result);

struct Function {
  std::string name;
  std::string doc;
  std::vector<Arg> args;
  Thunk thunk = nullptr;
  std::shared_ptr<const void> callable;
  // py::arg extras, one per parameter or none: its name, and its default if it has one.
  std::vector<std::string> names;
  std::vector<std::optional<Value>> defaults;
};

namespace detail {

template <class T, class = void>
struct ArgOf {
  static_assert(sizeof(T) == 0,
                "kvault lite extension build: a bound function's parameter type has no lite "
                "binding (the full build is used)");
};
template <> struct ArgOf<Tensor> { static constexpr Arg value = Arg::kTensor; };
template <> struct ArgOf<std::optional<Tensor>> { static constexpr Arg value = Arg::kOptionalTensor; };
template <> struct ArgOf<std::vector<Tensor>> { static constexpr Arg value = Arg::kTensorList; };
template <> struct ArgOf<int> { static constexpr Arg value = Arg::kInt; };
template <> struct ArgOf<int64_t> { static constexpr Arg value = Arg::kInt64; };
template <> struct ArgOf<double> { static constexpr Arg value = Arg::kDouble; };
template <> struct ArgOf<float> { static constexpr Arg value = Arg::kFloat; };
template <> struct ArgOf<bool> { static constexpr Arg value = Arg::kBool; };
template <> struct ArgOf<std::vector<int64_t>> { static constexpr Arg value = Arg::kIntList; };
template <> struct ArgOf<IntArrayRef> { static constexpr Arg value = Arg::kIntArrayRef; };
template <> struct ArgOf<std::string> { static constexpr Arg value = Arg::kString; };
template <> struct ArgOf<std::optional<int64_t>> { static constexpr Arg value = Arg::kOptionalInt64; };
template <> struct ArgOf<std::optional<double>> { static constexpr Arg value = Arg::kOptionalDouble; };
template <> struct ArgOf<unsigned int> { static constexpr Arg value = Arg::kUInt; };
template <> struct ArgOf<uint64_t> { static constexpr Arg value = Arg::kUInt64; };
template <class T>
struct ArgOf<T, std::enable_if_t<std::is_same_v<T, long long> && !std::is_same_v<T, int64_t>>> {
  static constexpr Arg value = Arg::kLongLong;
};
template <class T>
struct ArgOf<T, std::enable_if_t<std::is_same_v<T, unsigned long long> && !std::is_same_v<T, uint64_t>>> {
  static constexpr Arg value = Arg::kULongLong;
};
template <> struct ArgOf<std::tuple<int, int>> { static constexpr Arg value = Arg::kIntPair; };
template <> struct ArgOf<std::tuple<int, int, int>> { static constexpr Arg value = Arg::kIntTriple; };
template <> struct ArgOf<std::tuple<int64_t, int64_t>> { static constexpr Arg value = Arg::kInt64Pair; };
template <> struct ArgOf<std::tuple<int64_t, int64_t, int64_t>> { static constexpr Arg value = Arg::kInt64Triple; };
template <> struct ArgOf<std::vector<int>> { static constexpr Arg value = Arg::kIntVector; };
template <> struct ArgOf<std::vector<float>> { static constexpr Arg value = Arg::kFloatVector; };
template <> struct ArgOf<std::vector<double>> { static constexpr Arg value = Arg::kDoubleVector; };

template <class A>
using Bare = std::remove_cv_t<std::remove_reference_t<A>>;

template <class R> struct Returnable : std::false_type {};
template <> struct Returnable<void> : std::true_type {};
template <> struct Returnable<Tensor> : std::true_type {};
template <> struct Returnable<std::vector<Tensor>> : std::true_type {};
template <> struct Returnable<int> : std::true_type {};
template <> struct Returnable<int64_t> : std::true_type {};
template <> struct Returnable<unsigned int> : std::true_type {};
template <> struct Returnable<uint64_t> : std::true_type {};
template <> struct Returnable<double> : std::true_type {};
template <> struct Returnable<float> : std::true_type {};
template <> struct Returnable<bool> : std::true_type {};
template <> struct Returnable<std::string> : std::true_type {};
template <class T> struct Returnable<std::vector<T>> : Returnable<T> {};
template <class... T> struct Returnable<std::tuple<T...>> : std::bool_constant<(Returnable<Bare<T>>::value && ...)> {};
template <class A, class B>
struct Returnable<std::pair<A, B>> : std::bool_constant<Returnable<Bare<A>>::value && Returnable<Bare<B>>::value> {};

inline Value ToValue(Tensor t) { Value v; v.kind = Value::Kind::kTensor; v.tensor = std::move(t); return v; }
inline Value ToValue(std::vector<Tensor> t) { Value v; v.kind = Value::Kind::kTensorList; v.tensors = std::move(t); return v; }
inline Value ToValue(bool b) { Value v; v.kind = Value::Kind::kBool; v.b = b; return v; }
template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
Value ToValue(T i) { Value v; v.kind = Value::Kind::kInt; v.i = static_cast<int64_t>(i); return v; }
inline Value ToValue(double d) { Value v; v.kind = Value::Kind::kDouble; v.d = d; return v; }
inline Value ToValue(float d) { Value v; v.kind = Value::Kind::kDouble; v.d = d; return v; }
inline Value ToValue(std::string s) { Value v; v.kind = Value::Kind::kString; v.s = std::move(s); return v; }
template <class T>
Value ToValue(std::vector<T> l) {
  Value v;
  v.kind = Value::Kind::kList;
  for (auto&& e : l) v.items.push_back(ToValue(T(std::move(e))));
  return v;
}
template <class A, class B>
Value ToValue(std::pair<A, B> p) {  // a tuple, as pybind11 returns it
  Value v;
  v.kind = Value::Kind::kTuple;
  v.items.push_back(ToValue(std::move(p.first)));
  v.items.push_back(ToValue(std::move(p.second)));
  return v;
}
template <class... T>
Value ToValue(std::tuple<T...> t) {
  Value v;
  v.kind = Value::Kind::kTuple;
  std::apply([&](auto&&... e) { (v.items.push_back(ToValue(std::move(e))), ...); }, std::move(t));
  return v;
}

// A by-value parameter is moved from the loaded value, as pybind11 does; a reference
// parameter refers to it.
template <class A>
A&& Pass(void* p) { return static_cast<A&&>(*static_cast<Bare<A>*>(p)); }

template <class C, class R, class... A>
struct Callable {
  static_assert(Returnable<Bare<R>>::value,
                "kvault lite extension build: a bound function's return type has no lite "
                "binding (the full build is used)");
  template <size_t... I>
  static void Call(const C& c, void* const* args, Value* result, std::index_sequence<I...>) {
    if constexpr (std::is_void_v<R>) {
      c(Pass<A>(args[I])...);
      *result = Value();
    } else {
      *result = ToValue(Bare<R>(c(Pass<A>(args[I])...)));
    }
  }
  static void Thunk(const void* callable, void* const* args, Value* result) {
    Call(*static_cast<const C*>(callable), args, result, std::index_sequence_for<A...>{});
  }
  static std::vector<Arg> Args() { return {ArgOf<Bare<A>>::value...}; }
  static constexpr size_t kArity = sizeof...(A);
};

template <class F, class = void>
struct Traits {
  static_assert(sizeof(F) == 0,
                "kvault lite extension build: m.def takes a function or a lambda here (the full "
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

// py::none(), as a default value.
struct NoneValue {};

namespace detail {
inline Value ToValue(NoneValue) { return Value(); }
inline Value ToValue(std::nullopt_t) { return Value(); }
inline Value ToValue(const char* s) { return ToValue(std::string(s)); }
template <class T, class = void>
struct Defaultable : std::false_type {};
template <class T>
struct Defaultable<T, std::void_t<decltype(ToValue(std::declval<T>()))>> : std::true_type {};
}  // namespace detail

// pybind11's py::arg("name"), and py::arg("name") = value, among m.def's extras: the
// parameter's keyword, and a default (a number, bool, string or None) the call may omit.
struct NamedArg {
  explicit NamedArg(const char* n) : name(n) {}
  template <class T>
  NamedArg operator=(T&& value) const {
    static_assert(detail::Defaultable<std::decay_t<T>>::value,
                  "kvault lite extension build: a py::arg default of a type it does not convert (the "
                  "full build is used)");
    NamedArg a(name);
    a.default_value = detail::ToValue(std::decay_t<T>(std::forward<T>(value)));
    return a;
  }
  const char* name;
  std::optional<Value> default_value;
};

// What a candidate's PYBIND11_MODULE body sees as its module.
class Module {
 public:
  Module(std::vector<Function>* out, std::string* doc) : out_(out), doc_(doc) {}

  // m.def(name, f, extras...): extras are a docstring and py::arg annotations, one per
  // parameter (or none), in any order, as pybind11 takes them.
  template <class F, class... Extra>
  Module& def(const char* name, F&& f, const Extra&... extra) {
    using Stored = std::decay_t<F>;
    using T = detail::Traits<Stored>;
    constexpr size_t kNamed = (size_t{0} + ... + size_t{std::is_same_v<Extra, NamedArg>});
    static_assert(kNamed == 0 || kNamed == T::kArity,
                  "The number of argument annotations does not match the number of function arguments");
    static_assert(((std::is_same_v<Extra, NamedArg> || std::is_convertible_v<const Extra&, const char*>) &&
                   ...),
                  "kvault lite extension build: an m.def extra it does not know (the full build is used)");
    Function fn;
    fn.name = name;
    fn.args = T::Args();
    fn.thunk = &T::Thunk;
    fn.callable = std::make_shared<const Stored>(std::forward<F>(f));
    (Add(fn, extra), ...);
    out_->push_back(std::move(fn));
    return *this;
  }
  // m.doc() = "...": the module's docstring.
  std::string& doc() { return *doc_; }

 private:
  static void Add(Function& fn, const NamedArg& a) {
    fn.names.push_back(a.name);
    fn.defaults.push_back(a.default_value);
  }
  static void Add(Function& fn, const char* doc) { fn.doc = doc; }

  std::vector<Function>* out_;
  std::string* doc_;
};

using Body = void (*)(Module&);

// Defined in lite.cc: the extension module `name` (a new reference, or nullptr with a
// Python ImportError set), holding the functions `body` defines.
PyObjectPtr InitModule(const char* name, Body body);

}  // namespace kvault_lite
