// The lite extension build's other half (docs/toolchains.md, "The lite extension
// build"), compiled once per toolchain and flag set with PyTorch's full headers and
// pybind11, and linked into every candidate built that way: each kvault_lite call
// forwarded to PyTorch's call of the same name, and the Python module of a candidate's
// PYBIND11_MODULE body (module.h), whose functions load arguments with pybind11's
// casters of PyTorch's types, try overloads in pybind11's order and convert results as
// pybind11 would.
#include <torch/extension.h>

#include <limits>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#ifdef KVAULT_LITE_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include "cuda.h"
#endif
#include "module.h"
#include "parallel.h"
#include "tensor.h"

namespace py = pybind11;

namespace kvault_lite {
namespace {

static_assert(sizeof(at::Tensor) == sizeof(void*) && alignof(at::Tensor) == alignof(void*),
              "at::Tensor is one pointer, as kvault_lite::Tensor");
#define KVAULT_LITE_SAME(name) \
  static_assert(static_cast<int>(ScalarType::name) == static_cast<int>(at::ScalarType::name), #name);
KVAULT_LITE_SAME(Byte)
KVAULT_LITE_SAME(Char)
KVAULT_LITE_SAME(Short)
KVAULT_LITE_SAME(Int)
KVAULT_LITE_SAME(Long)
KVAULT_LITE_SAME(Half)
KVAULT_LITE_SAME(Float)
KVAULT_LITE_SAME(Double)
KVAULT_LITE_SAME(Bool)
KVAULT_LITE_SAME(BFloat16)
#undef KVAULT_LITE_SAME
static_assert(static_cast<int>(DeviceType::CPU) == static_cast<int>(c10::DeviceType::CPU), "CPU");
static_assert(static_cast<int>(DeviceType::CUDA) == static_cast<int>(c10::DeviceType::CUDA), "CUDA");

// A lite tensor's storage is an at::Tensor's.
const at::Tensor& A(const Tensor& t) { return *std::launder(reinterpret_cast<const at::Tensor*>(&t)); }
at::Tensor& A(Tensor& t) { return *std::launder(reinterpret_cast<at::Tensor*>(&t)); }

Tensor Wrap(at::Tensor&& r) {
  Tensor out;
  A(out) = std::move(r);
  return out;
}

at::ScalarType At(ScalarType t) { return static_cast<at::ScalarType>(static_cast<int8_t>(t)); }
ScalarType Lite(at::ScalarType t) { return static_cast<ScalarType>(static_cast<int8_t>(t)); }
at::Device At(Device d) { return at::Device(static_cast<c10::DeviceType>(d.type()), d.index()); }
Device Lite(at::Device d) { return Device(static_cast<DeviceType>(d.type()), d.index()); }
at::IntArrayRef At(IntArrayRef a) { return at::IntArrayRef(a.data(), a.size()); }
c10::string_view At(std::string_view s) { return c10::string_view(s.data(), s.size()); }
IntArrayRef Lite(at::IntArrayRef a) { return IntArrayRef(a.data(), a.size()); }

at::Scalar At(Scalar s) {
  switch (s.kind()) {
    case Scalar::Kind::kBool: return at::Scalar(s.as_int() != 0);
    case Scalar::Kind::kInt: return at::Scalar(s.as_int());
    case Scalar::Kind::kDouble: return at::Scalar(s.as_double());
  }
  return at::Scalar(s.as_double());
}

template <class T>
auto At(const std::optional<T>& v) -> c10::optional<decltype(At(*v))> {
  if (!v) return c10::nullopt;
  return At(*v);
}
c10::optional<int64_t> At(std::optional<int64_t> v) {
  if (!v) return c10::nullopt;
  return *v;
}
c10::optional<at::Tensor> At(const std::optional<Tensor>& t) {
  if (!t) return c10::nullopt;
  return A(*t);
}
std::vector<at::Tensor> At(const std::vector<Tensor>& l) {
  std::vector<at::Tensor> out;
  for (const Tensor& t : l) out.push_back(A(t));
  return out;
}

at::TensorOptions At(const TensorOptions& o) {
  at::TensorOptions r;
  if (o.dtype_opt()) r = r.dtype(At(*o.dtype_opt()));
  if (o.device_opt()) r = r.device(At(*o.device_opt()));
  if (o.requires_grad_opt()) r = r.requires_grad(*o.requires_grad_opt());
  return r;
}

}  // namespace

const char* toString(ScalarType t) { return c10::toString(At(t)); }
namespace detail {
template <class T>
std::string Streamed(const T& v) {
  std::ostringstream s;
  s << v;
  return s.str();
}
std::string Printed(double v) { return Streamed(v); }
std::string Printed(ScalarType v) { return Streamed(At(v)); }
std::string Printed(TypeMeta v) { return Streamed(caffe2::TypeMeta::fromScalarType(At(v.toScalarType()))); }
std::string Printed(const Device& v) { return Streamed(At(v)); }
std::string Printed(IntArrayRef v) { return Streamed(At(v)); }
}  // namespace detail
std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << At(t); }
std::ostream& operator<<(std::ostream& os, TypeMeta m) { return os << detail::Printed(m); }
size_t TypeMeta::itemsize() const noexcept { return caffe2::TypeMeta::fromScalarType(At(type_)).itemsize(); }
std::ostream& operator<<(std::ostream& os, const Device& d) { return os << At(d); }
std::ostream& operator<<(std::ostream& os, IntArrayRef a) { return os << At(a); }

Tensor::Tensor() { new (this) at::Tensor(); }
Tensor::Tensor(const Tensor& other) { new (this) at::Tensor(A(other)); }
Tensor::Tensor(Tensor&& other) noexcept { new (this) at::Tensor(std::move(A(other))); }
Tensor& Tensor::operator=(const Tensor& other) & { A(*this) = A(other); return *this; }
Tensor& Tensor::operator=(Tensor&& other) & noexcept { A(*this) = std::move(A(other)); return *this; }
Tensor::~Tensor() { A(*this).~Tensor(); }

bool Tensor::defined() const { return A(*this).defined(); }
int64_t Tensor::dim() const { return A(*this).dim(); }
int64_t Tensor::numel() const { return A(*this).numel(); }
int64_t Tensor::size(int64_t d) const { return A(*this).size(d); }
int64_t Tensor::stride(int64_t d) const { return A(*this).stride(d); }
IntArrayRef Tensor::sizes() const { return Lite(A(*this).sizes()); }
IntArrayRef Tensor::strides() const { return Lite(A(*this).strides()); }
ScalarType Tensor::scalar_type() const { return Lite(A(*this).scalar_type()); }
int64_t Tensor::element_size() const { return A(*this).element_size(); }
size_t Tensor::nbytes() const { return A(*this).nbytes(); }
int64_t Tensor::storage_offset() const { return A(*this).storage_offset(); }
TensorOptions Tensor::options() const {
  const at::Tensor& t = A(*this);
  return TensorOptions().dtype(Lite(t.scalar_type())).device(Lite(t.device()));
}
Device Tensor::device() const { return Lite(A(*this).device()); }
int64_t Tensor::get_device() const { return A(*this).get_device(); }
bool Tensor::is_cuda() const { return A(*this).is_cuda(); }
bool Tensor::is_cpu() const { return A(*this).is_cpu(); }
bool Tensor::is_contiguous() const { return A(*this).is_contiguous(); }
bool Tensor::requires_grad() const { return A(*this).requires_grad(); }
void* Tensor::data_ptr() const { return A(*this).data_ptr(); }

void* Tensor::TypedData(ScalarType expected) const {
  const at::Tensor& t = A(*this);
  switch (expected) {
#define KVAULT_LITE_DATA(name)  \
  case ScalarType::name:        \
    return t.data_ptr<typename CppTypeOf<ScalarType::name>::type>();
    KVAULT_LITE_DATA(Byte)
    KVAULT_LITE_DATA(Char)
    KVAULT_LITE_DATA(Short)
    KVAULT_LITE_DATA(Int)
    KVAULT_LITE_DATA(Long)
    KVAULT_LITE_DATA(Half)
    KVAULT_LITE_DATA(Float)
    KVAULT_LITE_DATA(Double)
    KVAULT_LITE_DATA(Bool)
    KVAULT_LITE_DATA(BFloat16)
#undef KVAULT_LITE_DATA
  }
  TORCH_CHECK(false, "kvault_lite: data_ptr of an unknown type");
}

void ParallelFor(int64_t begin, int64_t end, int64_t grain_size, const void* f, RangeBody body) {
  at::parallel_for(begin, end, grain_size, [&](int64_t b, int64_t e) { body(f, b, e); });
}
int get_num_threads() { return at::get_num_threads(); }
int get_thread_num() { return at::get_thread_num(); }
bool in_parallel_region() { return at::in_parallel_region(); }

// What PyTorch's Tensor::accessor and packed_accessor32 check, in their words.
void Tensor::CheckAccessor(int64_t dims, bool int32_indices) const {
  const at::Tensor& t = A(*this);
  if (int32_indices)
    TORCH_CHECK(t.numel() <= static_cast<int64_t>(std::numeric_limits<int32_t>::max()),
                "numel needs to be smaller than int32_t max; otherwise, please use packed_accessor64");
  TORCH_CHECK(t.dim() == dims, "TensorAccessor expected ", dims, " dims but tensor has ", t.dim());
}

void Tensor::ItemInto(ScalarType as, void* out) const {
  const at::Tensor& t = A(*this);
  switch (as) {
#define KVAULT_LITE_ITEM(name)                                         \
  case ScalarType::name: {                                             \
    using T = typename CppTypeOf<ScalarType::name>::type;              \
    *static_cast<T*>(out) = t.item<T>();                               \
    return;                                                            \
  }
    KVAULT_LITE_ITEM(Byte)
    KVAULT_LITE_ITEM(Char)
    KVAULT_LITE_ITEM(Short)
    KVAULT_LITE_ITEM(Int)
    KVAULT_LITE_ITEM(Long)
    KVAULT_LITE_ITEM(Half)
    KVAULT_LITE_ITEM(Float)
    KVAULT_LITE_ITEM(Double)
    KVAULT_LITE_ITEM(Bool)
    KVAULT_LITE_ITEM(BFloat16)
#undef KVAULT_LITE_ITEM
  }
  TORCH_CHECK(false, "kvault_lite: item of an unknown type");
}

Tensor Tensor::contiguous() const { return Wrap(A(*this).contiguous()); }
Tensor Tensor::clone() const { return Wrap(A(*this).clone()); }
Tensor Tensor::view(IntArrayRef size) const { return Wrap(A(*this).view(At(size))); }
Tensor Tensor::reshape(IntArrayRef size) const { return Wrap(A(*this).reshape(At(size))); }
Tensor Tensor::flatten(int64_t s, int64_t e) const { return Wrap(A(*this).flatten(s, e)); }
Tensor Tensor::transpose(int64_t a, int64_t b) const { return Wrap(A(*this).transpose(a, b)); }
Tensor Tensor::t() const { return Wrap(A(*this).t()); }
Tensor Tensor::permute(IntArrayRef dims) const { return Wrap(A(*this).permute(At(dims))); }
Tensor Tensor::unsqueeze(int64_t d) const { return Wrap(A(*this).unsqueeze(d)); }
Tensor Tensor::squeeze() const { return Wrap(A(*this).squeeze()); }
Tensor Tensor::squeeze(int64_t d) const { return Wrap(A(*this).squeeze(d)); }
Tensor Tensor::expand(IntArrayRef size) const { return Wrap(A(*this).expand(At(size))); }
Tensor Tensor::narrow(int64_t d, int64_t s, int64_t l) const { return Wrap(A(*this).narrow(d, s, l)); }
Tensor Tensor::select(int64_t d, int64_t i) const { return Wrap(A(*this).select(d, i)); }
Tensor Tensor::to(TensorOptions o, bool non_blocking, bool copy) const {
  return Wrap(A(*this).to(At(o), non_blocking, copy));
}
Tensor Tensor::to(Device d, ScalarType t, bool non_blocking, bool copy) const {
  return Wrap(A(*this).to(At(d), At(t), non_blocking, copy));
}
Tensor Tensor::to(ScalarType t, bool non_blocking, bool copy) const {
  return Wrap(A(*this).to(At(t), non_blocking, copy));
}
Tensor Tensor::to(const Tensor& other, bool non_blocking, bool copy) const {
  return Wrap(A(*this).to(A(other), non_blocking, copy));
}
Tensor Tensor::cuda() const { return Wrap(A(*this).cuda()); }
Tensor Tensor::cpu() const { return Wrap(A(*this).cpu()); }
Tensor& Tensor::zero_() { A(*this).zero_(); return *this; }
Tensor& Tensor::fill_(Scalar v) { A(*this).fill_(At(v)); return *this; }
Tensor Tensor::sum() const { return Wrap(A(*this).sum()); }
Tensor Tensor::sum(IntArrayRef dims, bool keepdim) const { return Wrap(A(*this).sum(At(dims), keepdim)); }
Tensor Tensor::mean() const { return Wrap(A(*this).mean()); }
Tensor Tensor::mean(IntArrayRef dims, bool keepdim) const { return Wrap(A(*this).mean(At(dims), keepdim)); }
Tensor Tensor::clamp_min(Scalar v) const { return Wrap(A(*this).clamp_min(At(v))); }
Tensor Tensor::clamp_max(Scalar v) const { return Wrap(A(*this).clamp_max(At(v))); }
Tensor Tensor::relu() const { return Wrap(A(*this).relu()); }
Tensor Tensor::sqrt() const { return Wrap(A(*this).sqrt()); }
Tensor Tensor::rsqrt() const { return Wrap(A(*this).rsqrt()); }
Tensor Tensor::exp() const { return Wrap(A(*this).exp()); }
Tensor Tensor::abs() const { return Wrap(A(*this).abs()); }
std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim) const {
  std::vector<Tensor> out;
  for (at::Tensor& t : A(*this).chunk(chunks, dim)) out.push_back(Wrap(std::move(t)));
  return out;
}
Tensor Tensor::operator-() const { return Wrap(-A(*this)); }
Tensor& Tensor::operator+=(const Tensor& o) { A(*this) += A(o); return *this; }
Tensor& Tensor::operator-=(const Tensor& o) { A(*this) -= A(o); return *this; }
Tensor& Tensor::operator*=(const Tensor& o) { A(*this) *= A(o); return *this; }
Tensor& Tensor::operator/=(const Tensor& o) { A(*this) /= A(o); return *this; }
Tensor& Tensor::operator+=(Scalar o) { A(*this) += At(o); return *this; }
Tensor& Tensor::operator-=(Scalar o) { A(*this) -= At(o); return *this; }
Tensor& Tensor::operator*=(Scalar o) { A(*this) *= At(o); return *this; }
Tensor& Tensor::operator/=(Scalar o) { A(*this) /= At(o); return *this; }
Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) {
  A(*this).copy_(A(src), non_blocking);
  return *this;
}
Tensor Tensor::add(const Tensor& o, Scalar alpha) const { return Wrap(A(*this).add(A(o), At(alpha))); }
Tensor Tensor::add(Scalar o, Scalar alpha) const { return Wrap(A(*this).add(At(o), At(alpha))); }
Tensor Tensor::sub(const Tensor& o, Scalar alpha) const { return Wrap(A(*this).sub(A(o), At(alpha))); }
Tensor Tensor::sub(Scalar o, Scalar alpha) const { return Wrap(A(*this).sub(At(o), At(alpha))); }
Tensor Tensor::mul(const Tensor& o) const { return Wrap(A(*this).mul(A(o))); }
Tensor Tensor::mul(Scalar o) const { return Wrap(A(*this).mul(At(o))); }
Tensor Tensor::div(const Tensor& o) const { return Wrap(A(*this).div(A(o))); }
Tensor Tensor::div(Scalar o) const { return Wrap(A(*this).div(At(o))); }
Tensor& Tensor::add_(const Tensor& o, Scalar alpha) { A(*this).add_(A(o), At(alpha)); return *this; }
Tensor& Tensor::add_(Scalar o, Scalar alpha) { A(*this).add_(At(o), At(alpha)); return *this; }
Tensor& Tensor::sub_(const Tensor& o, Scalar alpha) { A(*this).sub_(A(o), At(alpha)); return *this; }
Tensor& Tensor::sub_(Scalar o, Scalar alpha) { A(*this).sub_(At(o), At(alpha)); return *this; }
Tensor& Tensor::mul_(const Tensor& o) { A(*this).mul_(A(o)); return *this; }
Tensor& Tensor::mul_(Scalar o) { A(*this).mul_(At(o)); return *this; }
Tensor& Tensor::div_(const Tensor& o) { A(*this).div_(A(o)); return *this; }
Tensor& Tensor::div_(Scalar o) { A(*this).div_(At(o)); return *this; }
Tensor Tensor::pow(Scalar e) const { return Wrap(A(*this).pow(At(e))); }
Tensor Tensor::pow(const Tensor& e) const { return Wrap(A(*this).pow(A(e))); }
Tensor Tensor::tanh() const { return Wrap(A(*this).tanh()); }
Tensor Tensor::sigmoid() const { return Wrap(A(*this).sigmoid()); }
Tensor Tensor::log() const { return Wrap(A(*this).log()); }
Tensor Tensor::max() const { return Wrap(A(*this).max()); }
Tensor Tensor::min() const { return Wrap(A(*this).min()); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const {
  auto [values, indices] = A(*this).max(dim, keepdim);
  return {Wrap(std::move(values)), Wrap(std::move(indices))};
}
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const {
  auto [values, indices] = A(*this).min(dim, keepdim);
  return {Wrap(std::move(values)), Wrap(std::move(indices))};
}
Tensor Tensor::clamp(std::optional<Scalar> lo, std::optional<Scalar> hi) const {
  return Wrap(A(*this).clamp(At(lo), At(hi)));
}
Tensor& Tensor::clamp_(std::optional<Scalar> lo, std::optional<Scalar> hi) {
  A(*this).clamp_(At(lo), At(hi));
  return *this;
}
Tensor& Tensor::relu_() { A(*this).relu_(); return *this; }
Tensor Tensor::matmul(const Tensor& o) const { return Wrap(A(*this).matmul(A(o))); }
Tensor Tensor::mm(const Tensor& o) const { return Wrap(A(*this).mm(A(o))); }
Tensor Tensor::bmm(const Tensor& o) const { return Wrap(A(*this).bmm(A(o))); }
Tensor Tensor::softmax(int64_t dim, std::optional<ScalarType> dtype) const {
  return Wrap(A(*this).softmax(dim, At(dtype)));
}
Tensor Tensor::log_softmax(int64_t dim, std::optional<ScalarType> dtype) const {
  return Wrap(A(*this).log_softmax(dim, At(dtype)));
}
Tensor Tensor::slice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) const {
  return Wrap(A(*this).slice(dim, At(start), At(end), step));
}
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const { return Wrap(A(*this).index_select(dim, A(index))); }
Tensor Tensor::expand_as(const Tensor& o) const { return Wrap(A(*this).expand_as(A(o))); }
Tensor Tensor::view_as(const Tensor& o) const { return Wrap(A(*this).view_as(A(o))); }
Tensor Tensor::reshape_as(const Tensor& o) const { return Wrap(A(*this).reshape_as(A(o))); }

Tensor empty(IntArrayRef size, TensorOptions o) { return Wrap(torch::empty(At(size), At(o))); }
Tensor empty_strided(IntArrayRef size, IntArrayRef stride, TensorOptions o) {
  return Wrap(torch::empty_strided(At(size), At(stride), At(o)));
}
Tensor empty_like(const Tensor& t) { return Wrap(torch::empty_like(A(t))); }
Tensor empty_like(const Tensor& t, TensorOptions o) { return Wrap(torch::empty_like(A(t), At(o))); }
Tensor zeros(IntArrayRef size, TensorOptions o) { return Wrap(torch::zeros(At(size), At(o))); }
Tensor zeros_like(const Tensor& t) { return Wrap(torch::zeros_like(A(t))); }
Tensor zeros_like(const Tensor& t, TensorOptions o) { return Wrap(torch::zeros_like(A(t), At(o))); }
Tensor ones(IntArrayRef size, TensorOptions o) { return Wrap(torch::ones(At(size), At(o))); }
Tensor ones_like(const Tensor& t) { return Wrap(torch::ones_like(A(t))); }
Tensor ones_like(const Tensor& t, TensorOptions o) { return Wrap(torch::ones_like(A(t), At(o))); }
Tensor full(IntArrayRef size, Scalar v, TensorOptions o) { return Wrap(torch::full(At(size), At(v), At(o))); }
Tensor full_like(const Tensor& t, Scalar v) { return Wrap(torch::full_like(A(t), At(v))); }
Tensor full_like(const Tensor& t, Scalar v, TensorOptions o) { return Wrap(torch::full_like(A(t), At(v), At(o))); }
Tensor sqrt(const Tensor& t) { return Wrap(torch::sqrt(A(t))); }
Tensor rsqrt(const Tensor& t) { return Wrap(torch::rsqrt(A(t))); }
Tensor exp(const Tensor& t) { return Wrap(torch::exp(A(t))); }
Tensor abs(const Tensor& t) { return Wrap(torch::abs(A(t))); }
Tensor relu(const Tensor& t) { return Wrap(torch::relu(A(t))); }
Tensor mean(const Tensor& t) { return Wrap(torch::mean(A(t))); }
Tensor sum(const Tensor& t) { return Wrap(torch::sum(A(t))); }
Tensor tanh(const Tensor& t) { return Wrap(torch::tanh(A(t))); }
Tensor sigmoid(const Tensor& t) { return Wrap(torch::sigmoid(A(t))); }
Tensor log(const Tensor& t) { return Wrap(torch::log(A(t))); }
Tensor clamp(const Tensor& t, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  return Wrap(torch::clamp(A(t), At(lo), At(hi)));
}
Tensor softmax(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype) {
  return Wrap(torch::softmax(A(t), dim, At(dtype)));
}
Tensor log_softmax(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype) {
  return Wrap(torch::log_softmax(A(t), dim, At(dtype)));
}
Tensor matmul(const Tensor& a, const Tensor& b) { return Wrap(torch::matmul(A(a), A(b))); }
Tensor mm(const Tensor& a, const Tensor& b) { return Wrap(torch::mm(A(a), A(b))); }
Tensor bmm(const Tensor& a, const Tensor& b) { return Wrap(torch::bmm(A(a), A(b))); }
Tensor addmm(const Tensor& self, const Tensor& m1, const Tensor& m2, Scalar beta, Scalar alpha) {
  return Wrap(torch::addmm(A(self), A(m1), A(m2), At(beta), At(alpha)));
}
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) { return Wrap(torch::cat(At(tensors), dim)); }
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) { return Wrap(torch::stack(At(tensors), dim)); }
Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  return Wrap(torch::linear(A(input), A(weight), At(bias)));
}
// PyTorch's convolutions of each dimension: padding as sizes or by name ("same",
// "valid"); the transposed ones with output_padding.
#define KVAULT_LITE_CONV(name)                                                                                \
  Tensor name(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride, \
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {                                     \
    return Wrap(torch::name(A(input), A(weight), At(bias), At(stride), At(padding), At(dilation), groups));     \
  }                                                                                                             \
  Tensor name(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride, \
              std::string_view padding, IntArrayRef dilation, int64_t groups) {                                \
    return Wrap(torch::name(A(input), A(weight), At(bias), At(stride), At(padding), At(dilation), groups));     \
  }
KVAULT_LITE_CONV(conv1d)
KVAULT_LITE_CONV(conv2d)
KVAULT_LITE_CONV(conv3d)
#undef KVAULT_LITE_CONV
#define KVAULT_LITE_CONV_TRANSPOSE(name)                                                                        \
  Tensor name(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,   \
              IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {           \
    return Wrap(torch::name(A(input), A(weight), At(bias), At(stride), At(padding), At(output_padding), groups,   \
                            At(dilation)));                                                                     \
  }
KVAULT_LITE_CONV_TRANSPOSE(conv_transpose1d)
KVAULT_LITE_CONV_TRANSPOSE(conv_transpose2d)
KVAULT_LITE_CONV_TRANSPOSE(conv_transpose3d)
#undef KVAULT_LITE_CONV_TRANSPOSE
Tensor max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return Wrap(torch::max_pool2d(A(self), At(kernel_size), At(stride), At(padding), At(dilation), ceil_mode));
}
Tensor avg_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  return Wrap(torch::avg_pool2d(A(self), At(kernel_size), At(stride), At(padding), ceil_mode, count_include_pad,
                                At(divisor_override)));
}
Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size) {
  return Wrap(torch::adaptive_avg_pool2d(A(self), At(output_size)));
}
Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var, bool training,
                  double momentum, double eps, bool cudnn_enabled) {
  return Wrap(torch::batch_norm(A(input), At(weight), At(bias), At(running_mean), At(running_var), training, momentum,
                                eps, cudnn_enabled));
}
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps, bool cudnn_enable) {
  return Wrap(torch::layer_norm(A(input), At(normalized_shape), At(weight), At(bias), eps, cudnn_enable));
}
Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps, bool cudnn_enabled) {
  return Wrap(torch::group_norm(A(input), num_groups, At(weight), At(bias), eps, cudnn_enabled));
}
Tensor gelu(const Tensor& self, std::string_view approximate) { return Wrap(torch::gelu(A(self), At(approximate))); }

#define KVAULT_LITE_OPERATOR(op)                                                                  \
  Tensor operator op(const Tensor& a, const Tensor& b) { return Wrap(A(a) op A(b)); }             \
  Tensor operator op(const Tensor& a, Scalar b) { return Wrap(A(a) op At(b)); }                   \
  Tensor operator op(Scalar a, const Tensor& b) { return Wrap(At(a) op A(b)); }
KVAULT_LITE_OPERATOR(+)
KVAULT_LITE_OPERATOR(-)
KVAULT_LITE_OPERATOR(*)
KVAULT_LITE_OPERATOR(/)
#undef KVAULT_LITE_OPERATOR

void Fail(const char* file, int line, const char* condition, const std::string& message, FailKind kind) {
  (void)file;
  (void)line;
  const std::string text =
      message.empty() ? c10::str("Expected ", condition, " to be true, but got false.") : message;
  switch (kind) {
    case FailKind::kValue: TORCH_CHECK_VALUE(false, text);
    case FailKind::kIndex: TORCH_CHECK_INDEX(false, text);
    case FailKind::kType: TORCH_CHECK_TYPE(false, text);
    case FailKind::kNotImplemented: TORCH_CHECK_NOT_IMPLEMENTED(false, text);
    case FailKind::kError: break;
  }
  TORCH_CHECK(false, text);
}

void Warn(const std::string& message) { TORCH_WARN(message); }

#ifdef KVAULT_LITE_CUDA
void CheckCuda(int error, const char* file, int line) {
  (void)file;
  (void)line;
  C10_CUDA_CHECK(static_cast<cudaError_t>(error));
}

CUDAStream getCurrentCUDAStream(int device_index) {
  c10::cuda::CUDAStream s = c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device_index));
  return CUDAStream(s.stream(), s.device_index());
}
cudaDeviceProp* getCurrentDeviceProperties() { return at::cuda::getCurrentDeviceProperties(); }
cudaDeviceProp* getDeviceProperties(int64_t device) { return at::cuda::getDeviceProperties(device); }
cublasHandle_t getCurrentCUDABlasHandle() { return at::cuda::getCurrentCUDABlasHandle(); }
int current_device() { return c10::cuda::current_device(); }

CUDAGuard::CUDAGuard(Device device) : guard_(new c10::cuda::CUDAGuard(At(device))) {}
CUDAGuard::CUDAGuard(int index) : guard_(new c10::cuda::CUDAGuard(static_cast<c10::DeviceIndex>(index))) {}
CUDAGuard::~CUDAGuard() { delete static_cast<c10::cuda::CUDAGuard*>(guard_); }
OptionalCUDAGuard::OptionalCUDAGuard(std::optional<Device> device)
    : guard_(device ? new c10::cuda::CUDAGuard(At(*device)) : nullptr) {}
OptionalCUDAGuard::~OptionalCUDAGuard() { delete static_cast<c10::cuda::CUDAGuard*>(guard_); }
std::optional<Device> device_of(const Tensor& t) {
  if (!t.defined()) return std::nullopt;
  return t.device();
}
#else
void CheckCuda(int error, const char* file, int line) {
  (void)file;
  (void)line;
  TORCH_CHECK(error == 0, "CUDA error ", error, " (this PyTorch has no CUDA)");
}
#endif

namespace {

// One argument: pybind11's caster of PyTorch's type, then the lite value made from it.
class Loaded {
 public:
  virtual ~Loaded() = default;
  virtual bool Load(py::handle h, bool convert) = 0;
  virtual void* Get() = 0;  // the lite value; valid while this lives
};

template <class T, class L, class Make>
class LoadedAs final : public Loaded {
 public:
  bool Load(py::handle h, bool convert) override {
    if (!caster_.load(h, convert)) return false;
    value_.emplace(Make()(py::detail::cast_op<T&>(caster_)));
    return true;
  }
  void* Get() override { return &*value_; }

 private:
  py::detail::make_caster<T> caster_;
  std::optional<L> value_;
};

struct Same {  // pybind11's tuple caster hands over a value, the others a reference
  template <class T>
  std::decay_t<T> operator()(T&& v) const { return std::forward<T>(v); }
};
struct FromTensor {
  Tensor operator()(at::Tensor& t) const { return Wrap(at::Tensor(t)); }
};
struct FromOptionalTensor {
  std::optional<Tensor> operator()(c10::optional<at::Tensor>& t) const {
    if (!t) return std::nullopt;
    return Wrap(at::Tensor(*t));
  }
};
struct FromTensorList {
  std::vector<Tensor> operator()(std::vector<at::Tensor>& l) const {
    std::vector<Tensor> out;
    for (const at::Tensor& t : l) out.push_back(Wrap(at::Tensor(t)));
    return out;
  }
};
struct FromIntArrayRef {
  IntArrayRef operator()(at::IntArrayRef a) const { return Lite(a); }
};
template <class T>
struct FromOptional {
  std::optional<T> operator()(c10::optional<T>& v) const {
    if (!v) return std::nullopt;
    return *v;
  }
};

std::unique_ptr<Loaded> MakeLoaded(Arg a) {
  switch (a) {
    case Arg::kTensor: return std::make_unique<LoadedAs<at::Tensor, Tensor, FromTensor>>();
    case Arg::kOptionalTensor:
      return std::make_unique<LoadedAs<c10::optional<at::Tensor>, std::optional<Tensor>, FromOptionalTensor>>();
    case Arg::kTensorList:
      return std::make_unique<LoadedAs<std::vector<at::Tensor>, std::vector<Tensor>, FromTensorList>>();
    case Arg::kInt: return std::make_unique<LoadedAs<int, int, Same>>();
    case Arg::kInt64: return std::make_unique<LoadedAs<int64_t, int64_t, Same>>();
    case Arg::kDouble: return std::make_unique<LoadedAs<double, double, Same>>();
    case Arg::kFloat: return std::make_unique<LoadedAs<float, float, Same>>();
    case Arg::kBool: return std::make_unique<LoadedAs<bool, bool, Same>>();
    case Arg::kIntList: return std::make_unique<LoadedAs<std::vector<int64_t>, std::vector<int64_t>, Same>>();
    case Arg::kIntArrayRef: return std::make_unique<LoadedAs<at::IntArrayRef, IntArrayRef, FromIntArrayRef>>();
    case Arg::kString: return std::make_unique<LoadedAs<std::string, std::string, Same>>();
    case Arg::kOptionalInt64:
      return std::make_unique<LoadedAs<c10::optional<int64_t>, std::optional<int64_t>, FromOptional<int64_t>>>();
    case Arg::kOptionalDouble:
      return std::make_unique<LoadedAs<c10::optional<double>, std::optional<double>, FromOptional<double>>>();
    case Arg::kUInt: return std::make_unique<LoadedAs<unsigned int, unsigned int, Same>>();
    case Arg::kUInt64: return std::make_unique<LoadedAs<uint64_t, uint64_t, Same>>();
    case Arg::kLongLong: return std::make_unique<LoadedAs<long long, long long, Same>>();
    case Arg::kULongLong: return std::make_unique<LoadedAs<unsigned long long, unsigned long long, Same>>();
    case Arg::kIntPair: return std::make_unique<LoadedAs<std::tuple<int, int>, std::tuple<int, int>, Same>>();
    case Arg::kIntTriple:
      return std::make_unique<LoadedAs<std::tuple<int, int, int>, std::tuple<int, int, int>, Same>>();
    case Arg::kInt64Pair:
      return std::make_unique<LoadedAs<std::tuple<int64_t, int64_t>, std::tuple<int64_t, int64_t>, Same>>();
    case Arg::kInt64Triple:
      return std::make_unique<
          LoadedAs<std::tuple<int64_t, int64_t, int64_t>, std::tuple<int64_t, int64_t, int64_t>, Same>>();
    case Arg::kIntVector: return std::make_unique<LoadedAs<std::vector<int>, std::vector<int>, Same>>();
    case Arg::kFloatVector: return std::make_unique<LoadedAs<std::vector<float>, std::vector<float>, Same>>();
    case Arg::kDoubleVector: return std::make_unique<LoadedAs<std::vector<double>, std::vector<double>, Same>>();
  }
  throw std::logic_error("kvault_lite: unknown parameter kind " + std::to_string(static_cast<int>(a)));
}

// The parameter's type as pybind11 spells it in a signature.
std::string TypeName(Arg a) {
  switch (a) {
    case Arg::kTensor: return "at::Tensor";
    case Arg::kOptionalTensor: return "Optional[at::Tensor]";
    case Arg::kTensorList: return "List[at::Tensor]";
    case Arg::kInt:
    case Arg::kInt64: return "int";
    case Arg::kDouble:
    case Arg::kFloat: return "float";
    case Arg::kBool: return "bool";
    case Arg::kIntList: return "List[int]";
    case Arg::kIntArrayRef: return "Tuple[int, ...]";
    case Arg::kString: return "str";
    case Arg::kOptionalInt64: return "Optional[int]";
    case Arg::kOptionalDouble: return "Optional[float]";
    case Arg::kUInt:
    case Arg::kUInt64:
    case Arg::kLongLong:
    case Arg::kULongLong: return "int";
    case Arg::kIntPair:
    case Arg::kInt64Pair: return "Tuple[int, int]";
    case Arg::kIntTriple:
    case Arg::kInt64Triple: return "Tuple[int, int, int]";
    case Arg::kIntVector: return "List[int]";
    case Arg::kFloatVector:
    case Arg::kDoubleVector: return "List[float]";
  }
  return "?";
}

// What pybind11 returns for the C++ value (module.h's Returnable).
py::object ToPython(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kNone: return py::none();
    case Value::Kind::kTensor: return py::cast(A(v.tensor));
    case Value::Kind::kTensorList: {
      py::list l;
      for (const Tensor& t : v.tensors) l.append(py::cast(A(t)));
      return std::move(l);
    }
    case Value::Kind::kInt: return py::int_(v.i);
    case Value::Kind::kDouble: return py::float_(v.d);
    case Value::Kind::kBool: return py::bool_(v.b);
    case Value::Kind::kString: return py::str(v.s);
    case Value::Kind::kList: {
      py::list l;
      for (const Value& e : v.items) l.append(ToPython(e));
      return std::move(l);
    }
    case Value::Kind::kTuple: {
      py::tuple t(v.items.size());
      for (size_t i = 0; i < v.items.size(); ++i) t[i] = ToPython(v.items[i]);
      return std::move(t);
    }
  }
  throw std::logic_error("kvault_lite: unexpected return value");
}

struct Overloads {
  std::string name;
  std::vector<Function> functions;
};

[[noreturn]] void NoMatch(const Overloads& o, const py::args& args, const py::kwargs& kwargs) {
  std::string msg = o.name + "(): incompatible function arguments. The following argument types are supported:\n";
  int n = 0;
  for (const Function& f : o.functions) {
    msg += "    " + std::to_string(++n) + ". (";
    for (size_t i = 0; i < f.args.size(); ++i) {
      const std::string name = f.names.empty() ? "arg" + std::to_string(i) : f.names[i];
      msg += (i ? ", " : "") + name + ": " + TypeName(f.args[i]);
      if (!f.defaults.empty() && f.defaults[i])
        msg += " = " + py::repr(ToPython(*f.defaults[i])).cast<std::string>();
    }
    msg += ")\n";
  }
  msg += "\nInvoked with: ";
  for (size_t i = 0; i < args.size(); ++i) msg += (i ? ", " : "") + py::repr(args[i]).cast<std::string>();
  if (kwargs.size() > 0) msg += (args.size() ? ", kwargs: " : "kwargs: ") + py::repr(kwargs).cast<std::string>();
  throw py::type_error(msg);
}

// The call's arguments in f's parameter order, as pybind11 matches them: the positional
// ones, then each further parameter by its py::arg keyword or else its default; nothing
// when they do not fit (too many, one missing, a keyword f has not or that names a
// parameter given positionally).
std::optional<std::vector<py::object>> Arguments(const Function& f, const py::args& args,
                                                 const py::kwargs& kwargs) {
  if (args.size() > f.args.size() || (kwargs.size() > 0 && f.names.empty())) return std::nullopt;
  std::vector<py::object> out;
  for (size_t i = 0; i < args.size(); ++i) out.push_back(args[i]);
  size_t keywords_used = 0;
  for (size_t i = args.size(); i < f.args.size(); ++i) {
    if (!f.names.empty() && kwargs.contains(f.names[i].c_str())) {
      out.push_back(kwargs[f.names[i].c_str()]);
      ++keywords_used;
    } else if (!f.defaults.empty() && f.defaults[i]) {
      out.push_back(ToPython(*f.defaults[i]));
    } else {
      return std::nullopt;
    }
  }
  if (keywords_used != kwargs.size()) return std::nullopt;
  return out;
}

py::object Dispatch(const Overloads& o, const py::args& args, const py::kwargs& kwargs) {
  // Like pybind11: several overloads get a pass without implicit conversions first.
  for (int pass = o.functions.size() > 1 ? 0 : 1; pass < 2; ++pass) {
    for (const Function& f : o.functions) {
      auto given = Arguments(f, args, kwargs);
      if (!given) continue;
      std::vector<std::unique_ptr<Loaded>> loaded;
      std::vector<void*> values;
      for (size_t i = 0; i < f.args.size(); ++i) {
        loaded.push_back(MakeLoaded(f.args[i]));
        if (!loaded.back()->Load((*given)[i], pass == 1)) break;
        values.push_back(loaded.back()->Get());
      }
      if (values.size() != f.args.size()) continue;
      Value result;
      f.thunk(f.callable.get(), values.data(), &result);
      return ToPython(result);
    }
  }
  NoMatch(o, args, kwargs);
}

}  // namespace

PyObjectPtr InitModule(const char* name, Body body) {
  PYBIND11_CHECK_PYTHON_VERSION
  PYBIND11_ENSURE_INTERNALS_READY
  auto* def = new py::module_::module_def();  // one per module, for the process's life
  auto m = py::module_::create_extension_module(name, nullptr, def);
  try {
    std::vector<Function> functions;
    std::string module_doc;
    Module module(&functions, &module_doc);
    body(module);
    if (!module_doc.empty()) m.doc() = module_doc;
    std::vector<std::shared_ptr<Overloads>> by_name;
    for (Function& f : functions) {
      std::shared_ptr<Overloads> o;
      for (const auto& have : by_name)
        if (have->name == f.name) o = have;
      if (!o) {
        o = std::make_shared<Overloads>();
        o->name = f.name;
        by_name.push_back(o);
      }
      o->functions.push_back(std::move(f));
    }
    for (const auto& o : by_name) {
      std::string doc;
      for (const Function& f : o->functions) doc += (doc.empty() ? "" : "\n") + f.doc;
      m.def(
          o->name.c_str(),
          [o](const py::args& args, const py::kwargs& kwargs) { return Dispatch(*o, args, kwargs); },
          doc.c_str());
    }
    return m.ptr();
  }
  PYBIND11_CATCH_INIT_EXCEPTIONS
}

}  // namespace kvault_lite
