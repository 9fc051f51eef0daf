#pragma once
// The lite extension build's tensor API (docs/toolchains.md, "The lite extension
// build"): the part of PyTorch's C++ tensor API that extension candidates use around
// their kernels, declared here without PyTorch's headers and defined in lite.cc, which
// is compiled once with PyTorch's full headers and forwards every call to PyTorch.
// Nothing here computes anything itself: a lite call does what the PyTorch call of
// the same name does, on the same tensor.
//
// c10::Half and c10::BFloat16 are only declared here: api.h includes PyTorch's own
// definitions (their arithmetic runs in the candidate's kernels and must be PyTorch's)
// when the build defines KVAULT_LITE_HALF, which it does for every source that names
// half or bfloat16 in any spelling: under nvcc those headers cost seconds. api.h puts
// these names into at::, torch:: and c10::; this header keeps them in kvault_lite:: so
// that lite.cc can see them beside PyTorch's own.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace c10 {
struct Half;
struct BFloat16;
}  // namespace c10

namespace kvault_lite {

// PyTorch's numbering (c10/core/ScalarType.h); lite.cc checks every value.
enum class ScalarType : int8_t {
  Byte = 0,
  Char = 1,
  Short = 2,
  Int = 3,
  Long = 4,
  Half = 5,
  Float = 6,
  Double = 7,
  Bool = 11,
  BFloat16 = 15,
};

// PyTorch's numbering (c10/core/DeviceType.h).
enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };

template <class T> struct ScalarTypeOf { static constexpr bool known = false; };
#define KVAULT_LITE_SCALAR(type, name)                                  \
  template <> struct ScalarTypeOf<type> {                               \
    static constexpr bool known = true;                                 \
    static constexpr ScalarType value = ScalarType::name;               \
  };
KVAULT_LITE_SCALAR(uint8_t, Byte)
KVAULT_LITE_SCALAR(int8_t, Char)
KVAULT_LITE_SCALAR(int16_t, Short)
KVAULT_LITE_SCALAR(int32_t, Int)
KVAULT_LITE_SCALAR(int64_t, Long)
KVAULT_LITE_SCALAR(c10::Half, Half)
KVAULT_LITE_SCALAR(float, Float)
KVAULT_LITE_SCALAR(double, Double)
KVAULT_LITE_SCALAR(bool, Bool)
KVAULT_LITE_SCALAR(c10::BFloat16, BFloat16)
#undef KVAULT_LITE_SCALAR

template <ScalarType S> struct CppTypeOf;
template <> struct CppTypeOf<ScalarType::Byte> { using type = uint8_t; };
template <> struct CppTypeOf<ScalarType::Char> { using type = int8_t; };
template <> struct CppTypeOf<ScalarType::Short> { using type = int16_t; };
template <> struct CppTypeOf<ScalarType::Int> { using type = int32_t; };
template <> struct CppTypeOf<ScalarType::Long> { using type = int64_t; };
template <> struct CppTypeOf<ScalarType::Half> { using type = c10::Half; };
template <> struct CppTypeOf<ScalarType::Float> { using type = float; };
template <> struct CppTypeOf<ScalarType::Double> { using type = double; };
template <> struct CppTypeOf<ScalarType::Bool> { using type = bool; };
template <> struct CppTypeOf<ScalarType::BFloat16> { using type = c10::BFloat16; };

// PyTorch's names ("Float", "Half", ...).
const char* toString(ScalarType t);
std::ostream& operator<<(std::ostream& os, ScalarType t);

struct Device {
  Device(DeviceType type, int index = -1) : type_(type), index_(static_cast<int8_t>(index)) {}
  DeviceType type() const { return type_; }
  int8_t index() const { return index_; }
  bool has_index() const { return index_ >= 0; }
  bool is_cuda() const { return type_ == DeviceType::CUDA; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  bool operator==(const Device& o) const { return type_ == o.type_ && index_ == o.index_; }
  bool operator!=(const Device& o) const { return !(*this == o); }

 private:
  DeviceType type_;
  int8_t index_;
};
std::ostream& operator<<(std::ostream& os, const Device& d);

// A view of int64_t values owned elsewhere, as c10::ArrayRef<int64_t>.
class IntArrayRef {
 public:
  using value_type = int64_t;
  using iterator = const int64_t*;
  using const_iterator = const int64_t*;
  using size_type = size_t;
  constexpr IntArrayRef() = default;
  constexpr IntArrayRef(const int64_t& one) : data_(&one), size_(1) {}
  constexpr IntArrayRef(const int64_t* data, size_t size) : data_(data), size_(size) {}
  IntArrayRef(const std::vector<int64_t>& v) : data_(v.data()), size_(v.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  // As c10::ArrayRef: valid for the full expression holding the braced list.
  constexpr IntArrayRef(std::initializer_list<int64_t> l)
      : data_(l.begin() == l.end() ? nullptr : l.begin()), size_(l.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  template <size_t N>
  constexpr IntArrayRef(const int64_t (&a)[N]) : data_(a), size_(N) {}
  constexpr const int64_t* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const int64_t* begin() const { return data_; }
  constexpr const int64_t* end() const { return data_ + size_; }
  constexpr const int64_t& operator[](size_t i) const { return data_[i]; }
  constexpr const int64_t& front() const { return data_[0]; }
  constexpr const int64_t& back() const { return data_[size_ - 1]; }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }
  bool equals(IntArrayRef o) const {
    if (size_ != o.size_) return false;
    for (size_t i = 0; i < size_; ++i)
      if (data_[i] != o.data_[i]) return false;
    return true;
  }

 private:
  const int64_t* data_ = nullptr;
  size_t size_ = 0;
};
inline bool operator==(IntArrayRef a, IntArrayRef b) { return a.equals(b); }
inline bool operator!=(IntArrayRef a, IntArrayRef b) { return !a.equals(b); }
std::ostream& operator<<(std::ostream& os, IntArrayRef a);

// c10::Scalar: a number kept as PyTorch keeps it (bool, integer, floating point), so
// that `x * 2` and `x * 2.0` mean what they mean to PyTorch.
class Scalar {
 public:
  enum class Kind : int8_t { kBool, kInt, kDouble };
  template <class S, std::enable_if_t<std::is_arithmetic_v<S>, int> = 0>
  Scalar(S v) {  // NOLINT: implicit, as c10::Scalar's
    if constexpr (std::is_same_v<S, bool>) {
      kind_ = Kind::kBool;
      i_ = v;
    } else if constexpr (std::is_integral_v<S>) {
      kind_ = Kind::kInt;
      i_ = static_cast<int64_t>(v);
    } else {
      kind_ = Kind::kDouble;
      d_ = static_cast<double>(v);
    }
  }
  Kind kind() const { return kind_; }
  int64_t as_int() const { return i_; }
  double as_double() const { return d_; }

 private:
  Kind kind_ = Kind::kInt;
  int64_t i_ = 0;
  double d_ = 0;
};

#if defined(__CUDACC__)
#define KVAULT_LITE_HOST_DEVICE __host__ __device__
#define KVAULT_LITE_DEVICE __device__
#else
#define KVAULT_LITE_HOST_DEVICE
#define KVAULT_LITE_DEVICE
#endif

// PyTorch's pointer kinds of accessors (at::DefaultPtrTraits, at::RestrictPtrTraits).
template <class T> struct DefaultPtrTraits { using PtrType = T*; };
template <class T> struct RestrictPtrTraits { using PtrType = T* __restrict__; };

template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits, class index_t = int64_t>
class TensorAccessor;

// What an accessor's operator[] gives: the accessor of the next N - 1 dimensions, or,
// of the last dimension, the element (const from a const accessor, as PyTorch's).
template <class T, size_t N, template <class> class PtrTraits, class index_t>
struct AccessorStep {
  using type = TensorAccessor<T, N - 1, PtrTraits, index_t>;
  using const_type = const type;
  KVAULT_LITE_HOST_DEVICE static type At(typename PtrTraits<T>::PtrType data, const index_t* sizes,
                                         const index_t* strides, index_t i) {
    return type(data + strides[0] * i, sizes + 1, strides + 1);
  }
};
template <class T, template <class> class PtrTraits, class index_t>
struct AccessorStep<T, 1, PtrTraits, index_t> {
  using type = T&;
  using const_type = const T&;
  KVAULT_LITE_HOST_DEVICE static type At(typename PtrTraits<T>::PtrType data, const index_t*,
                                         const index_t* strides, index_t i) {
    return data[strides[0] * i];
  }
};

// What both accessors hold: the data, and sizes and strides as `Shape` (pointers to
// someone else's, or arrays of their own).
template <class T, template <class> class PtrTraits, class index_t, class Shape>
class AccessorBase {
 public:
  using PtrType = typename PtrTraits<T>::PtrType;
  KVAULT_LITE_HOST_DEVICE index_t size(index_t d) const { return sizes_[d]; }
  KVAULT_LITE_HOST_DEVICE index_t stride(index_t d) const { return strides_[d]; }
  KVAULT_LITE_HOST_DEVICE PtrType data() { return data_; }
  KVAULT_LITE_HOST_DEVICE const PtrType data() const { return data_; }

 protected:
  PtrType data_;
  Shape sizes_;
  Shape strides_;
};

// at::TensorAccessor: elements reached through sizes and strides held elsewhere (the
// tensor's, for x.accessor<T, N>(); a packed accessor's, for its operator[]); valid
// while its owner is.
template <class T, size_t N, template <class> class PtrTraits, class index_t>
class TensorAccessor : public AccessorBase<T, PtrTraits, index_t, const index_t*> {
 public:
  using Step = AccessorStep<T, N, PtrTraits, index_t>;
  KVAULT_LITE_HOST_DEVICE TensorAccessor(typename PtrTraits<T>::PtrType data, const index_t* sizes,
                                         const index_t* strides) {
    this->data_ = data;
    this->sizes_ = sizes;
    this->strides_ = strides;
  }
  KVAULT_LITE_HOST_DEVICE typename Step::type operator[](index_t i) {
    return Step::At(this->data_, this->sizes_, this->strides_, i);
  }
  KVAULT_LITE_HOST_DEVICE typename Step::const_type operator[](index_t i) const {
    return Step::At(this->data_, this->sizes_, this->strides_, i);
  }
};

// at::GenericPackedTensorAccessor (PackedTensorAccessor32/64): sizes and strides copied
// in, so that it can be handed to a kernel by value; its elements, as PyTorch's, are
// reached in device code only (under nvcc).
template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits, class index_t = int64_t>
class GenericPackedTensorAccessor : public AccessorBase<T, PtrTraits, index_t, index_t[N]> {
 public:
  using Step = AccessorStep<T, N, PtrTraits, index_t>;
  GenericPackedTensorAccessor(typename PtrTraits<T>::PtrType data, const int64_t* sizes,
                              const int64_t* strides) {
    this->data_ = data;
    for (size_t d = 0; d < N; ++d) {
      this->sizes_[d] = static_cast<index_t>(sizes[d]);
      this->strides_[d] = static_cast<index_t>(strides[d]);
    }
  }
  KVAULT_LITE_DEVICE typename Step::type operator[](index_t i) {
    return Step::At(this->data_, this->sizes_, this->strides_, i);
  }
  KVAULT_LITE_DEVICE typename Step::const_type operator[](index_t i) const {
    return Step::At(this->data_, this->sizes_, this->strides_, i);
  }
};
template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits>
using PackedTensorAccessor32 = GenericPackedTensorAccessor<T, N, PtrTraits, int32_t>;
template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits>
using PackedTensorAccessor64 = GenericPackedTensorAccessor<T, N, PtrTraits, int64_t>;

// caffe2::TypeMeta, what x.dtype() gives: an element type printed by PyTorch's name of
// it ("float", where a ScalarType prints "Float"), its size, and comparisons with
// ScalarType and TypeMeta. Like PyTorch's it is no ScalarType: `switch`, the dispatch
// macros and a ScalarType parameter do not take it (toScalarType() does, non-const
// as in PyTorch 1.13).
class TypeMeta {
 public:
  static TypeMeta fromScalarType(ScalarType t) { return TypeMeta(t); }
  size_t itemsize() const noexcept;
  bool isScalarType() const noexcept { return true; }
  bool isScalarType(ScalarType t) const noexcept { return t == type_; }
  ScalarType toScalarType() { return type_; }
  friend bool operator==(TypeMeta a, TypeMeta b) noexcept { return a.type_ == b.type_; }
  friend bool operator!=(TypeMeta a, TypeMeta b) noexcept { return a.type_ != b.type_; }
  friend bool operator==(ScalarType t, TypeMeta m) noexcept { return m.type_ == t; }
  friend bool operator==(TypeMeta m, ScalarType t) noexcept { return m.type_ == t; }
  friend bool operator!=(ScalarType t, TypeMeta m) noexcept { return m.type_ != t; }
  friend bool operator!=(TypeMeta m, ScalarType t) noexcept { return m.type_ != t; }

 private:
  explicit TypeMeta(ScalarType t) : type_(t) {}
  ScalarType type_;
};
std::ostream& operator<<(std::ostream& os, TypeMeta m);

class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(ScalarType dtype) : dtype_(dtype) {}
  TensorOptions(TypeMeta dtype) : dtype_(dtype.toScalarType()) {}
  TensorOptions(Device device) : device_(device) {}
  TensorOptions(DeviceType type) : device_(Device(type)) {}
  TensorOptions dtype(ScalarType t) const { TensorOptions o = *this; o.dtype_ = t; return o; }
  TensorOptions dtype(TypeMeta t) const { return dtype(t.toScalarType()); }
  TensorOptions device(Device d) const { TensorOptions o = *this; o.device_ = d; return o; }
  TensorOptions device(DeviceType t, int index = -1) const { return device(Device(t, index)); }
  TensorOptions requires_grad(bool r) const { TensorOptions o = *this; o.requires_grad_ = r; return o; }
  // What was set (PyTorch's TensorOptions has the same optional parts).
  const std::optional<ScalarType>& dtype_opt() const { return dtype_; }
  const std::optional<Device>& device_opt() const { return device_; }
  const std::optional<bool>& requires_grad_opt() const { return requires_grad_; }

 private:
  std::optional<ScalarType> dtype_;
  std::optional<Device> device_;
  std::optional<bool> requires_grad_;
};

inline TensorOptions dtype(ScalarType t) { return TensorOptions().dtype(t); }
inline TensorOptions dtype(TypeMeta t) { return TensorOptions().dtype(t); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }

// What PyTorch's deprecated x.type() gives, as far as candidates use it: its scalar
// type (scalarType(), and as the dispatch macros' first argument) and is_cuda(). Like
// PyTorch's, it is no ScalarType: `x.type() == at::kFloat` does not compile.
class DeprecatedTypeProperties {
 public:
  DeprecatedTypeProperties(ScalarType scalar_type, DeviceType device_type)
      : scalar_type_(scalar_type), device_type_(device_type) {}
  ScalarType scalarType() const { return scalar_type_; }
  bool is_cuda() const { return device_type_ == DeviceType::CUDA; }

 private:
  ScalarType scalar_type_;
  DeviceType device_type_;
};

// A tensor: exactly PyTorch's at::Tensor in memory (one reference-counted pointer),
// every member forwarded to PyTorch by lite.cc.
class Tensor {
 public:
  Tensor();
  Tensor(const Tensor& other);
  Tensor(Tensor&& other) noexcept;
  Tensor& operator=(const Tensor& other) &;
  Tensor& operator=(Tensor&& other) & noexcept;
  // x[i][j] = v and x[i] = y: PyTorch's assignment to a temporary view fills it or
  // copies into it.
  Tensor& operator=(Scalar value) && { return fill_(value); }
  Tensor& operator=(const Tensor& src) && { return copy_(src); }
  ~Tensor();

  bool defined() const;
  int64_t dim() const;
  int64_t ndimension() const { return dim(); }
  int64_t numel() const;
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  IntArrayRef sizes() const;
  IntArrayRef strides() const;
  ScalarType scalar_type() const;
  TypeMeta dtype() const { return TypeMeta::fromScalarType(scalar_type()); }
  int64_t element_size() const;
  int64_t itemsize() const { return element_size(); }
  size_t nbytes() const;
  int64_t storage_offset() const;
  TensorOptions options() const;
  Device device() const;
  int64_t get_device() const;
  bool is_cuda() const;
  bool is_cpu() const;
  bool is_contiguous() const;
  bool requires_grad() const;

  void* data_ptr() const;
  template <class T>
  T* data_ptr() const {
    static_assert(ScalarTypeOf<std::remove_cv_t<T>>::known,
                  "kvault lite extension build: data_ptr<T> of a type it does not know (the full build is used)");
    return static_cast<T*>(TypedData(ScalarTypeOf<std::remove_cv_t<T>>::value));
  }
  template <class T>
  const T* const_data_ptr() const { return data_ptr<T>(); }
  // PyTorch's deprecated name of data_ptr<T>.
  template <class T>
  T* data() const { return data_ptr<T>(); }
  template <class T>
  T* mutable_data_ptr() const { return data_ptr<T>(); }
  template <class T>
  T item() const {
    static_assert(ScalarTypeOf<T>::known,
                  "kvault lite extension build: item<T> of a type it does not know (the full build is used)");
    T out;
    ItemInto(ScalarTypeOf<T>::value, &out);
    return out;
  }

  // x.accessor<float, 2>() and the packed ones, as PyTorch's: the tensor must have N
  // dimensions and elements of type T (and, for 32-bit indices, fit them).
  template <class T, size_t N>
  TensorAccessor<T, N> accessor() const& {
    static_assert(N > 0, "accessor is used for indexing tensor, for scalars use *data_ptr<T>()");
    CheckAccessor(static_cast<int64_t>(N), false);
    return TensorAccessor<T, N>(data_ptr<T>(), sizes().data(), strides().data());
  }
  template <class T, size_t N>
  TensorAccessor<T, N> accessor() && = delete;
  template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits, class index_t = int64_t>
  GenericPackedTensorAccessor<T, N, PtrTraits, index_t> generic_packed_accessor() const& {
    static_assert(N > 0, "accessor is used for indexing tensor, for scalars use *data_ptr<T>()");
    CheckAccessor(static_cast<int64_t>(N), false);
    return GenericPackedTensorAccessor<T, N, PtrTraits, index_t>(
        static_cast<typename PtrTraits<T>::PtrType>(data_ptr<T>()), sizes().data(), strides().data());
  }
  template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits, class index_t = int64_t>
  GenericPackedTensorAccessor<T, N, PtrTraits, index_t> generic_packed_accessor() && = delete;
  template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits>
  PackedTensorAccessor32<T, N, PtrTraits> packed_accessor32() const& {
    CheckAccessor(static_cast<int64_t>(N), true);
    return generic_packed_accessor<T, N, PtrTraits, int32_t>();
  }
  template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits>
  PackedTensorAccessor32<T, N, PtrTraits> packed_accessor32() && = delete;
  template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits>
  PackedTensorAccessor64<T, N, PtrTraits> packed_accessor64() const& {
    return generic_packed_accessor<T, N, PtrTraits, int64_t>();
  }
  template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits>
  PackedTensorAccessor64<T, N, PtrTraits> packed_accessor64() && = delete;
  // PyTorch's deprecated name of generic_packed_accessor (64-bit indices by default).
  template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits, class index_t = int64_t>
  GenericPackedTensorAccessor<T, N, PtrTraits, index_t> packed_accessor() const& {
    return generic_packed_accessor<T, N, PtrTraits, index_t>();
  }
  template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits, class index_t = int64_t>
  GenericPackedTensorAccessor<T, N, PtrTraits, index_t> packed_accessor() && = delete;

  Tensor contiguous() const;
  Tensor clone() const;
  Tensor view(IntArrayRef size) const;
  Tensor reshape(IntArrayRef size) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor permute(IntArrayRef dims) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor expand(IntArrayRef size) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor select(int64_t dim, int64_t index) const;
  // PyTorch's four x.to(...) (without the memory format): `x.to(x.device())` and
  // `x.to(x.dtype())` through TensorOptions, as there.
  Tensor to(TensorOptions options = {}, bool non_blocking = false, bool copy = false) const;
  Tensor to(Device device, ScalarType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor to(ScalarType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor to(const Tensor& other, bool non_blocking = false, bool copy = false) const;
  Tensor cuda() const;
  Tensor cpu() const;
  Tensor& zero_();
  Tensor& fill_(Scalar value);
  Tensor sum() const;
  Tensor sum(IntArrayRef dims, bool keepdim = false) const;
  Tensor mean() const;
  Tensor mean(IntArrayRef dims, bool keepdim = false) const;
  Tensor clamp_min(Scalar min) const;
  Tensor clamp_max(Scalar max) const;
  Tensor relu() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor exp() const;
  Tensor abs() const;
  // x[i]: x.select(0, i), as PyTorch's operator[].
  Tensor operator[](int64_t index) const { return select(0, index); }
  // PyTorch's deprecated x.type() (DeprecatedTypeProperties above).
  DeprecatedTypeProperties type() const { return DeprecatedTypeProperties(scalar_type(), device().type()); }
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  Tensor operator-() const;
  Tensor& operator+=(const Tensor& o);
  Tensor& operator-=(const Tensor& o);
  Tensor& operator*=(const Tensor& o);
  Tensor& operator/=(const Tensor& o);
  Tensor& operator+=(Scalar o);
  Tensor& operator-=(Scalar o);
  Tensor& operator*=(Scalar o);
  Tensor& operator/=(Scalar o);
  Tensor& copy_(const Tensor& src, bool non_blocking = false);
  // PyTorch's operations that LLM-written files call beside their kernels, with
  // PyTorch's parameters and defaults.
  Tensor add(const Tensor& other, Scalar alpha = 1) const;
  Tensor add(Scalar other, Scalar alpha = 1) const;
  Tensor sub(const Tensor& other, Scalar alpha = 1) const;
  Tensor sub(Scalar other, Scalar alpha = 1) const;
  Tensor mul(const Tensor& other) const;
  Tensor mul(Scalar other) const;
  Tensor div(const Tensor& other) const;
  Tensor div(Scalar other) const;
  Tensor& add_(const Tensor& other, Scalar alpha = 1);
  Tensor& add_(Scalar other, Scalar alpha = 1);
  Tensor& sub_(const Tensor& other, Scalar alpha = 1);
  Tensor& sub_(Scalar other, Scalar alpha = 1);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(Scalar other);
  Tensor& div_(const Tensor& other);
  Tensor& div_(Scalar other);
  Tensor pow(Scalar exponent) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor log() const;
  Tensor max() const;
  Tensor min() const;
  // (values, indices) along `dim`.
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
  Tensor& relu_();
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& mat2) const;
  Tensor bmm(const Tensor& mat2) const;
  Tensor softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor log_softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor slice(int64_t dim = 0, std::optional<int64_t> start = std::nullopt, std::optional<int64_t> end = std::nullopt,
               int64_t step = 1) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor expand_as(const Tensor& other) const;
  Tensor view_as(const Tensor& other) const;
  Tensor reshape_as(const Tensor& other) const;

 private:
  void* TypedData(ScalarType expected) const;
  // PyTorch's checks before an accessor: `dims` dimensions; with `int32_indices`, first
  // that the elements fit 32-bit indices (packed_accessor32's check).
  void CheckAccessor(int64_t dims, bool int32_indices) const;
  void ItemInto(ScalarType as, void* out) const;

  void* impl_;  // PyTorch's TensorImpl*, owned as at::Tensor owns it
};

Tensor empty(IntArrayRef size, TensorOptions options = {});
Tensor empty_strided(IntArrayRef size, IntArrayRef stride, TensorOptions options = {});
Tensor empty_like(const Tensor& t);
Tensor empty_like(const Tensor& t, TensorOptions options);
Tensor zeros(IntArrayRef size, TensorOptions options = {});
Tensor zeros_like(const Tensor& t);
Tensor zeros_like(const Tensor& t, TensorOptions options);
Tensor ones(IntArrayRef size, TensorOptions options = {});
Tensor ones_like(const Tensor& t);
Tensor ones_like(const Tensor& t, TensorOptions options);
Tensor full(IntArrayRef size, Scalar value, TensorOptions options = {});
Tensor full_like(const Tensor& t, Scalar value);
Tensor full_like(const Tensor& t, Scalar value, TensorOptions options);
// PyTorch's functions of one tensor that LLM-written files call beside their kernels.
Tensor sqrt(const Tensor& t);
Tensor rsqrt(const Tensor& t);
Tensor exp(const Tensor& t);
Tensor abs(const Tensor& t);
Tensor relu(const Tensor& t);
Tensor mean(const Tensor& t);
Tensor sum(const Tensor& t);
Tensor tanh(const Tensor& t);
Tensor sigmoid(const Tensor& t);
Tensor log(const Tensor& t);
Tensor clamp(const Tensor& t, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
Tensor softmax(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, Scalar beta = 1, Scalar alpha = 1);
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = {});
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = {}, IntArrayRef stride = 1,
              IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
// (PyTorch's padding by name, "same" or "valid": `{0, 0}` as padding is ambiguous there, and here.)
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              std::string_view padding, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = {},
                        IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef output_padding = 0,
                        int64_t groups = 1, IntArrayRef dilation = 1);
// The other convolutions, pooling, normalisations and GELU that models leave to
// PyTorch beside a fused kernel, with PyTorch's parameters and defaults.
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = {}, IntArrayRef stride = 1,
              IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              std::string_view padding, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = {}, IntArrayRef stride = 1,
              IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              std::string_view padding, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = {},
                        IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef output_padding = 0,
                        int64_t groups = 1, IntArrayRef dilation = 1);
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = {},
                        IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef output_padding = 0,
                        int64_t groups = 1, IntArrayRef dilation = 1);
Tensor max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  IntArrayRef dilation = 1, bool ceil_mode = false);
Tensor avg_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size);
Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var, bool training,
                  double momentum, double eps, bool cudnn_enabled);
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight = {},
                  const std::optional<Tensor>& bias = {}, double eps = 1e-05, bool cudnn_enable = true);
Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight = {},
                  const std::optional<Tensor>& bias = {}, double eps = 1e-05, bool cudnn_enabled = true);
Tensor gelu(const Tensor& self, std::string_view approximate = "none");

// PyTorch's arithmetic operators on tensors.
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, Scalar b);
Tensor operator-(const Tensor& a, Scalar b);
Tensor operator*(const Tensor& a, Scalar b);
Tensor operator/(const Tensor& a, Scalar b);
Tensor operator+(Scalar a, const Tensor& b);
Tensor operator-(Scalar a, const Tensor& b);
Tensor operator*(Scalar a, const Tensor& b);
Tensor operator/(Scalar a, const Tensor& b);

// TORCH_CHECK's failure: throws PyTorch's c10::Error with `message` (the condition's
// text when the message is empty), as PyTorch's macro does; TORCH_CHECK_VALUE's and
// the like's, PyTorch's error of that kind.
enum class FailKind : int8_t { kError, kValue, kIndex, kType, kNotImplemented };
[[noreturn]] void Fail(const char* file, int line, const char* condition, const std::string& message,
                       FailKind kind = FailKind::kError);
// TORCH_WARN: PyTorch's warning with `message`.
void Warn(const std::string& message);
// The dispatch macros' first argument: a ScalarType, or what x.type() gives.
inline ScalarType DispatchType(ScalarType t) { return t; }
inline ScalarType DispatchType(const DeprecatedTypeProperties& t) { return t.scalarType(); }
// C10_CUDA_CHECK's failure for a nonzero cudaError_t (as an int).
void CheckCuda(int error, const char* file, int line);

// c10::str: the arguments one after another, each as std::ostream would print it
// (numbers, strings, characters, ScalarType, TypeMeta, Device, IntArrayRef; anything else does
// not compile).
namespace detail {
std::string Printed(double v);
std::string Printed(ScalarType v);
std::string Printed(TypeMeta v);
std::string Printed(const Device& v);
std::string Printed(IntArrayRef v);
inline void Append(std::string& s, const char* v) { s += v; }
inline void Append(std::string& s, const std::string& v) { s += v; }
inline void Append(std::string& s, char v) { s += v; }
inline void Append(std::string& s, bool v) { s += v ? '1' : '0'; }
template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char>, int> = 0>
void Append(std::string& s, T v) { s += std::to_string(v); }
template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
void Append(std::string& s, T v) { s += Printed(static_cast<double>(v)); }
inline void Append(std::string& s, ScalarType v) { s += Printed(v); }
inline void Append(std::string& s, TypeMeta v) { s += Printed(v); }
inline void Append(std::string& s, DeviceType v) { s += Printed(Device(v)); }
inline void Append(std::string& s, const Device& v) { s += Printed(v); }
inline void Append(std::string& s, IntArrayRef v) { s += Printed(v); }
}  // namespace detail
template <class... A>
std::string Str(const A&... a) {
  std::string s;
  (detail::Append(s, a), ...);
  return s;
}
// Str of at least one argument.
template <class A, class... R>
std::string StrOfSome(const A& a, const R&... r) {
  return Str(a, r...);
}

}  // namespace kvault_lite
