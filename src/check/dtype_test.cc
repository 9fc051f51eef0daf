#include "check/dtype.h"

#include <gtest/gtest.h>

#include <cmath>

#include "check/testing/tensor_file_writer.h"

namespace kvault {
namespace {

using testing::FloatToBFloat16Bits;
using testing::FloatToHalfBits;

TEST(DTypeTest, NamesSizesKinds) {
  for (DType d : {DType::kFloat64, DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kInt64,
                  DType::kInt32, DType::kInt16, DType::kInt8, DType::kUInt8, DType::kBool}) {
    EXPECT_EQ(DTypeFromName(DTypeName(d)), d);
  }
  EXPECT_EQ(DTypeFromName("complex64"), std::nullopt);
  EXPECT_EQ(DTypeSize(DType::kFloat64), 8u);
  EXPECT_EQ(DTypeSize(DType::kBFloat16), 2u);
  EXPECT_EQ(DTypeSize(DType::kBool), 1u);
  EXPECT_TRUE(IsFloatingPoint(DType::kBFloat16));
  EXPECT_FALSE(IsFloatingPoint(DType::kUInt8));
}

TEST(DTypeTest, HalfKnownPatterns) {
  EXPECT_EQ(HalfBitsToFloat(0x0000), 0.0f);
  EXPECT_TRUE(std::signbit(HalfBitsToFloat(0x8000)));
  EXPECT_EQ(HalfBitsToFloat(0x3C00), 1.0f);
  EXPECT_EQ(HalfBitsToFloat(0xC000), -2.0f);
  EXPECT_EQ(HalfBitsToFloat(0x3555), 0.333251953125f);
  EXPECT_EQ(HalfBitsToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(HalfBitsToFloat(0x0400), std::ldexp(1.0f, -14));  // smallest normal
  EXPECT_EQ(HalfBitsToFloat(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(HalfBitsToFloat(0x03FF), 1023 * std::ldexp(1.0f, -24));
  EXPECT_EQ(HalfBitsToFloat(0x8001), -std::ldexp(1.0f, -24));
  EXPECT_EQ(HalfBitsToFloat(0x7C00), INFINITY);
  EXPECT_EQ(HalfBitsToFloat(0xFC00), -INFINITY);
  EXPECT_TRUE(std::isnan(HalfBitsToFloat(0x7E00)));
  EXPECT_TRUE(std::isnan(HalfBitsToFloat(0x7C01)));  // signalling NaN payload
  EXPECT_TRUE(std::isnan(HalfBitsToFloat(0xFFFF)));
}

TEST(DTypeTest, HalfExhaustiveAgainstFormula) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    int sign = (h & 0x8000) ? -1 : 1;
    int e = (h >> 10) & 0x1f;
    int m = h & 0x3ff;
    float got = HalfBitsToFloat(static_cast<uint16_t>(h));
    if (e == 31) {
      if (m == 0) {
        EXPECT_EQ(got, sign * INFINITY) << h;
      } else {
        EXPECT_TRUE(std::isnan(got)) << h;
      }
      continue;
    }
    double expected = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
    EXPECT_EQ(got, static_cast<float>(sign * expected)) << h;
    EXPECT_EQ(std::signbit(got), sign < 0) << h;
    // The test writer's encoder inverts the decoder on every non-NaN value.
    EXPECT_EQ(FloatToHalfBits(got), h) << h;
  }
}

TEST(DTypeTest, HalfEncoderRounding) {
  EXPECT_EQ(FloatToHalfBits(1.0f + std::ldexp(1.0f, -11)), 0x3C00);      // tie -> even
  EXPECT_EQ(FloatToHalfBits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);  // tie -> even (up)
  EXPECT_EQ(FloatToHalfBits(65519.0f), 0x7BFF);
  EXPECT_EQ(FloatToHalfBits(65520.0f), 0x7C00);
  EXPECT_EQ(FloatToHalfBits(1e-10f), 0x0000);
  EXPECT_EQ(FloatToHalfBits(NAN) & 0x7C00, 0x7C00);
}

TEST(DTypeTest, BFloat16KnownPatternsAndRoundTrip) {
  EXPECT_EQ(BFloat16BitsToFloat(0x3F80), 1.0f);
  EXPECT_EQ(BFloat16BitsToFloat(0xC000), -2.0f);
  EXPECT_EQ(BFloat16BitsToFloat(0x7F80), INFINITY);
  EXPECT_EQ(BFloat16BitsToFloat(0xFF80), -INFINITY);
  EXPECT_TRUE(std::isnan(BFloat16BitsToFloat(0x7FC0)));
  EXPECT_TRUE(std::isnan(BFloat16BitsToFloat(0xFF81)));
  EXPECT_EQ(BFloat16BitsToFloat(0x0001), std::ldexp(1.0f, -133));
  EXPECT_EQ(BFloat16BitsToFloat(0x7F7F), 3.38953139e38f);
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    float f = BFloat16BitsToFloat(static_cast<uint16_t>(b));
    if (!std::isnan(f)) {
      EXPECT_EQ(FloatToBFloat16Bits(f), b) << b;
    }
  }
  EXPECT_EQ(FloatToBFloat16Bits(1.0f + std::ldexp(1.0f, -8)), 0x3F80);  // tie -> even
}

TEST(DTypeTest, ElementAsDouble) {
  double d[] = {1.5, -2.25};
  EXPECT_EQ(ElementAsDouble(DType::kFloat64, reinterpret_cast<const std::byte*>(d), 1), -2.25);
  float f[] = {0.5f, 3.0f};
  EXPECT_EQ(ElementAsDouble(DType::kFloat32, reinterpret_cast<const std::byte*>(f), 1), 3.0);
  uint16_t h[] = {0x3C00, 0xC000};
  EXPECT_EQ(ElementAsDouble(DType::kFloat16, reinterpret_cast<const std::byte*>(h), 1), -2.0);
  EXPECT_EQ(ElementAsDouble(DType::kBFloat16, reinterpret_cast<const std::byte*>(h), 1), -2.0);
  int64_t l[] = {-7, 1LL << 40};
  EXPECT_EQ(ElementAsDouble(DType::kInt64, reinterpret_cast<const std::byte*>(l), 1), std::ldexp(1.0, 40));
  int8_t b[] = {-3, 5};
  EXPECT_EQ(ElementAsDouble(DType::kInt8, reinterpret_cast<const std::byte*>(b), 0), -3.0);
  EXPECT_EQ(ElementAsDouble(DType::kUInt8, reinterpret_cast<const std::byte*>(b), 0), 253.0);
  EXPECT_EQ(ElementAsDouble(DType::kBool, reinterpret_cast<const std::byte*>(b), 1), 1.0);
}

}  // namespace
}  // namespace kvault
