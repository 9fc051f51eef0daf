#include "check/dtype.h"

#include <array>
#include <utility>

namespace kvault {
namespace {

constexpr std::array<std::pair<DType, std::string_view>, 10> kNames = {{
    {DType::kFloat64, "float64"},
    {DType::kFloat32, "float32"},
    {DType::kFloat16, "float16"},
    {DType::kBFloat16, "bfloat16"},
    {DType::kInt64, "int64"},
    {DType::kInt32, "int32"},
    {DType::kInt16, "int16"},
    {DType::kInt8, "int8"},
    {DType::kUInt8, "uint8"},
    {DType::kBool, "bool"},
}};

}  // namespace

std::string_view DTypeName(DType dtype) {
  for (const auto& [d, name] : kNames) {
    if (d == dtype) return name;
  }
  return "?";
}

std::optional<DType> DTypeFromName(std::string_view name) {
  for (const auto& [d, n] : kNames) {
    if (n == name) return d;
  }
  return std::nullopt;
}

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kFloat64:
    case DType::kInt64: return 8;
    case DType::kFloat32:
    case DType::kInt32: return 4;
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kInt16: return 2;
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kBool: return 1;
  }
  return 1;
}

bool IsFloatingPoint(DType dtype) {
  return dtype == DType::kFloat64 || dtype == DType::kFloat32 || dtype == DType::kFloat16 ||
         dtype == DType::kBFloat16;
}

double ElementAsDouble(DType dtype, const std::byte* data, int64_t i) {
  const std::byte* p = data + i * static_cast<int64_t>(DTypeSize(dtype));
  switch (dtype) {
    case DType::kFloat64: return LoadUnaligned<double>(p);
    case DType::kFloat32: return LoadUnaligned<float>(p);
    case DType::kFloat16: return HalfBitsToFloat(LoadUnaligned<uint16_t>(p));
    case DType::kBFloat16: return BFloat16BitsToFloat(LoadUnaligned<uint16_t>(p));
    case DType::kInt64: return static_cast<double>(LoadUnaligned<int64_t>(p));
    case DType::kInt32: return LoadUnaligned<int32_t>(p);
    case DType::kInt16: return LoadUnaligned<int16_t>(p);
    case DType::kInt8: return LoadUnaligned<int8_t>(p);
    case DType::kUInt8: return LoadUnaligned<uint8_t>(p);
    case DType::kBool: return LoadUnaligned<uint8_t>(p) != 0 ? 1.0 : 0.0;
  }
  return 0;
}

}  // namespace kvault
