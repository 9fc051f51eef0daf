#pragma once
// Element types of tensor files (docs/tensor-file.md) and decoding of their bytes.
// Pure functions; thread-safe. Values are little endian; so is every host we run on.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace kvault {

static_assert(std::endian::native == std::endian::little, "tensor files are little endian");

enum class DType { kFloat64, kFloat32, kFloat16, kBFloat16, kInt64, kInt32, kInt16, kInt8, kUInt8, kBool };

// "float64", "bfloat16", "bool", ... as written in tensor files.
std::string_view DTypeName(DType dtype);
std::optional<DType> DTypeFromName(std::string_view name);
// Bytes per element.
size_t DTypeSize(DType dtype);
bool IsFloatingPoint(DType dtype);

// IEEE 754 binary16 -> float, exactly (subnormals, infinities, NaN payloads kept),
// written to compile to selects rather than branches.
inline float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t exponent = h & 0x7c00u;
  uint32_t bits = (uint32_t{h & 0x7fffu} << 13) + (112u << 23);  // rebias 15 -> 127
  if (exponent == 0x7c00u) bits += 112u << 23;                    // inf/NaN: exponent 255
  const float normal = std::bit_cast<float>(bits | sign);
  const float subnormal = static_cast<float>(h & 0x3ffu) * 0x1p-24f;  // exact; also +-0
  return exponent == 0 ? (sign ? -subnormal : subnormal) : normal;
}

// bfloat16 is the upper half of a float32.
inline float BFloat16BitsToFloat(uint16_t b) { return std::bit_cast<float>(uint32_t{b} << 16); }

// Element i of a buffer of `dtype` values, as a double (integers may round beyond
// 2^53). REQUIRES: data holds more than i elements.
double ElementAsDouble(DType dtype, const std::byte* data, int64_t i);

// Loads a T from possibly unaligned memory.
template <class T>
inline T LoadUnaligned(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace kvault
