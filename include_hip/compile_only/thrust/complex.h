#pragma once
// KernelVault compile-only shim for <thrust/complex.h>.
//
// PyTorch's c10/util/complex.h includes <thrust/complex.h> whenever __HIPCC__ or
// __CUDACC__ is defined. On a machine with hipcc but without rocThrust (Debian 12),
// this header stands in for it so that extension-format HIP sources can be
// compile-checked for AMD targets. It is put on the include path ONLY for
// compile-only builds against a PyTorch without HIP support; nothing compiled with
// it is ever linked or run. The math is straightforward textbook formulas, not a
// numerically careful implementation.
#include <cmath>

namespace thrust {

template <class T>
struct complex {
  using value_type = T;

  __host__ __device__ constexpr complex(const T& re = T(), const T& im = T()) : re_(re), im_(im) {}
  template <class U>
  __host__ __device__ explicit constexpr complex(const complex<U>& o)
      : re_(static_cast<T>(o.real())), im_(static_cast<T>(o.imag())) {}

  __host__ __device__ constexpr T real() const { return re_; }
  __host__ __device__ constexpr T imag() const { return im_; }
  __host__ __device__ void real(T v) { re_ = v; }
  __host__ __device__ void imag(T v) { im_ = v; }

 private:
  T re_;
  T im_;
};

template <class T>
__host__ __device__ complex<T> operator+(const complex<T>& a, const complex<T>& b) {
  return complex<T>(a.real() + b.real(), a.imag() + b.imag());
}
template <class T>
__host__ __device__ complex<T> operator-(const complex<T>& a, const complex<T>& b) {
  return complex<T>(a.real() - b.real(), a.imag() - b.imag());
}
template <class T>
__host__ __device__ complex<T> operator*(const complex<T>& a, const complex<T>& b) {
  return complex<T>(a.real() * b.real() - a.imag() * b.imag(),
                    a.real() * b.imag() + a.imag() * b.real());
}
template <class T>
__host__ __device__ complex<T> operator/(const complex<T>& a, const complex<T>& b) {
  T d = b.real() * b.real() + b.imag() * b.imag();
  return complex<T>((a.real() * b.real() + a.imag() * b.imag()) / d,
                    (a.imag() * b.real() - a.real() * b.imag()) / d);
}

template <class T>
__host__ __device__ T abs(const complex<T>& z) { return ::hypot(z.real(), z.imag()); }
template <class T>
__host__ __device__ T arg(const complex<T>& z) { return ::atan2(z.imag(), z.real()); }
template <class T>
__host__ __device__ complex<T> polar(const T& r, const T& theta = T()) {
  return complex<T>(r * ::cos(theta), r * ::sin(theta));
}
template <class T>
__host__ __device__ complex<T> exp(const complex<T>& z) {
  return polar(T(::exp(z.real())), z.imag());
}
template <class T>
__host__ __device__ complex<T> log(const complex<T>& z) {
  return complex<T>(::log(abs(z)), arg(z));
}
template <class T>
__host__ __device__ complex<T> log10(const complex<T>& z) {
  complex<T> l = log(z);
  T s = T(1) / T(::log(T(10)));
  return complex<T>(l.real() * s, l.imag() * s);
}
template <class T>
__host__ __device__ complex<T> sqrt(const complex<T>& z) {
  return polar(T(::sqrt(abs(z))), arg(z) / T(2));
}
template <class T>
__host__ __device__ complex<T> pow(const complex<T>& x, const complex<T>& y) {
  return exp(y * log(x));
}
template <class T>
__host__ __device__ complex<T> pow(const complex<T>& x, const T& y) {
  return exp(complex<T>(y) * log(x));
}
template <class T>
__host__ __device__ complex<T> pow(const T& x, const complex<T>& y) {
  return exp(y * log(complex<T>(x)));
}
template <class T>
__host__ __device__ complex<T> sinh(const complex<T>& z) {
  return complex<T>(::sinh(z.real()) * ::cos(z.imag()), ::cosh(z.real()) * ::sin(z.imag()));
}
template <class T>
__host__ __device__ complex<T> cosh(const complex<T>& z) {
  return complex<T>(::cosh(z.real()) * ::cos(z.imag()), ::sinh(z.real()) * ::sin(z.imag()));
}
template <class T>
__host__ __device__ complex<T> tanh(const complex<T>& z) { return sinh(z) / cosh(z); }
// sin(z) = -i sinh(iz), cos(z) = cosh(iz), tan(z) = -i tanh(iz)
template <class T>
__host__ __device__ complex<T> sin(const complex<T>& z) {
  complex<T> s = sinh(complex<T>(-z.imag(), z.real()));
  return complex<T>(s.imag(), -s.real());
}
template <class T>
__host__ __device__ complex<T> cos(const complex<T>& z) {
  return cosh(complex<T>(-z.imag(), z.real()));
}
template <class T>
__host__ __device__ complex<T> tan(const complex<T>& z) {
  complex<T> t = tanh(complex<T>(-z.imag(), z.real()));
  return complex<T>(t.imag(), -t.real());
}
// asinh(z) = log(z + sqrt(z^2 + 1)), acosh(z) = log(z + sqrt(z + 1) sqrt(z - 1)),
// atanh(z) = (log(1 + z) - log(1 - z)) / 2
template <class T>
__host__ __device__ complex<T> asinh(const complex<T>& z) {
  return log(z + sqrt(z * z + complex<T>(1)));
}
template <class T>
__host__ __device__ complex<T> acosh(const complex<T>& z) {
  return log(z + sqrt(z + complex<T>(1)) * sqrt(z - complex<T>(1)));
}
template <class T>
__host__ __device__ complex<T> atanh(const complex<T>& z) {
  complex<T> d = log(complex<T>(1) + z) - log(complex<T>(1) - z);
  return complex<T>(d.real() / T(2), d.imag() / T(2));
}
// asin(z) = -i asinh(iz), acos(z) = pi/2 - asin(z), atan(z) = -i atanh(iz)
template <class T>
__host__ __device__ complex<T> asin(const complex<T>& z) {
  complex<T> a = asinh(complex<T>(-z.imag(), z.real()));
  return complex<T>(a.imag(), -a.real());
}
template <class T>
__host__ __device__ complex<T> acos(const complex<T>& z) {
  complex<T> a = asin(z);
  return complex<T>(T(1.57079632679489661923) - a.real(), -a.imag());
}
template <class T>
__host__ __device__ complex<T> atan(const complex<T>& z) {
  complex<T> a = atanh(complex<T>(-z.imag(), z.real()));
  return complex<T>(a.imag(), -a.real());
}

}  // namespace thrust
