#include "check/elementwise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "check/testing/tensor_file_writer.h"

namespace kvault {
namespace {

// The documented definitions, computed the obvious way.
ElementStats Naive(DType dtype, const std::byte* ref, const std::byte* cand, int64_t n, const ElementRule& rule) {
  ElementStats s;
  s.compared = n;
  int64_t worst_bad = -1, max_at = -1;
  double worst_bad_abs = -1, max_abs = -1;
  for (int64_t i = 0; i < n; ++i) {
    double r = ElementAsDouble(dtype, ref, i), c = ElementAsDouble(dtype, cand, i);
    bool bad;
    double abs;
    if (std::isfinite(r) && std::isfinite(c)) {
      abs = std::fabs(c - r);
      if (abs > max_abs) max_abs = abs, max_at = i;
      if (r != 0) s.max_rel = std::max(s.max_rel, abs / std::fabs(r));
      bad = !(abs <= rule.atol + rule.rtol * std::fabs(r));
    } else {
      abs = std::numeric_limits<double>::infinity();
      bad = rule.forbid_non_finite || !((std::isnan(c) && std::isnan(r)) || (std::isinf(c) && c == r));
    }
    if (bad) {
      ++s.mismatched;
      if (abs > worst_bad_abs) worst_bad_abs = abs, worst_bad = i;
    }
  }
  s.max_abs = std::max(max_abs, 0.0);
  if (worst_bad >= 0) {
    s.worst = worst_bad, s.worst_mismatched = true, s.worst_abs = worst_bad_abs;
  } else if (max_at >= 0) {
    s.worst = max_at, s.worst_abs = max_abs;
  } else if (n > 0) {
    s.worst = 0;
  }
  return s;
}

// Random reference values and candidates that are mostly close, sometimes far,
// sometimes NaN or infinite, encoded in `dtype`.
void MakeData(DType dtype, int64_t n, double special_rate, std::mt19937& rng, std::string& ref, std::string& cand) {
  std::normal_distribution<double> value(0, 10);
  std::uniform_real_distribution<double> u(0, 1);
  const double specials[] = {NAN, INFINITY, -INFINITY, 0.0};
  auto encode = [&](std::string& out, double v) {
    char buf[8];
    size_t size = DTypeSize(dtype);
    if (dtype == DType::kFloat64) std::memcpy(buf, &v, 8);
    if (dtype == DType::kFloat32) { float f = static_cast<float>(v); std::memcpy(buf, &f, 4); }
    if (dtype == DType::kFloat16) { uint16_t h = testing::FloatToHalfBits(static_cast<float>(v)); std::memcpy(buf, &h, 2); }
    if (dtype == DType::kBFloat16) { uint16_t h = testing::FloatToBFloat16Bits(static_cast<float>(v)); std::memcpy(buf, &h, 2); }
    out.append(buf, size);
  };
  for (int64_t i = 0; i < n; ++i) {
    double r = value(rng);
    double c = r * (1 + (u(rng) - 0.5) * 2e-5);
    double p = u(rng);
    if (p < special_rate) c = specials[rng() % 4];
    else if (p < 2 * special_rate) r = specials[rng() % 4];
    else if (p < 3 * special_rate) c = r + value(rng);
    else if (p < 4 * special_rate) c = r = specials[rng() % 4];
    encode(ref, r);
    encode(cand, c);
  }
}

TEST(ElementwiseTest, MatchesNaiveDefinitionOnRandomData) {
  std::mt19937 rng(1234);
  for (DType dtype : {DType::kFloat64, DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    for (int64_t n : {0, 1, 3, 4, 2047, 2048, 2049, 10000, 50001}) {
      for (double rate : {0.0, 1e-4, 1e-2}) {
        for (bool forbid : {false, true}) {
          std::string ref, cand;
          MakeData(dtype, n, rate, rng, ref, cand);
          ElementRule rule{1e-4, 1e-4, forbid};
          const auto* r = reinterpret_cast<const std::byte*>(ref.data());
          const auto* c = reinterpret_cast<const std::byte*>(cand.data());
          ElementStats want = Naive(dtype, r, c, n, rule);
          // One thread, and the buffer split across 2, 3 and 7 threads: the same stats.
          for (unsigned threads : {1u, 2u, 3u, 7u}) {
            ElementStats got = CompareElements(dtype, r, c, n, rule, ElementSplit{threads, 1});
            SCOPED_TRACE(std::string(DTypeName(dtype)) + " n=" + std::to_string(n) + " rate=" +
                         std::to_string(rate) + " forbid=" + std::to_string(forbid) +
                         " threads=" + std::to_string(threads));
            EXPECT_EQ(got.compared, want.compared);
            EXPECT_EQ(got.mismatched, want.mismatched);
            EXPECT_EQ(got.max_abs, want.max_abs);
            EXPECT_NEAR(got.max_rel, want.max_rel, 1e-12 * want.max_rel);
            EXPECT_EQ(got.worst, want.worst);
            EXPECT_EQ(got.worst_mismatched, want.worst_mismatched);
            EXPECT_EQ(got.worst_abs, want.worst_abs);
          }
        }
      }
    }
  }
}

TEST(ElementwiseTest, InfiniteReferenceNeverPassesByHugeBound) {
  // With rtol > 0 the bound atol + rtol*|inf| is infinite; a finite candidate must
  // still not match an infinite reference.
  double ref[] = {INFINITY, 1e308, 1e308};
  double cand[] = {1.0, -1e308, -1e308};  // the differences overflow to inf
  const auto* r = reinterpret_cast<const std::byte*>(ref);
  const auto* c = reinterpret_cast<const std::byte*>(cand);
  EXPECT_EQ(CompareElements(DType::kFloat64, r, c, 1, {10.0, 1e-4, false}).mismatched, 1);
  // 2e308 is beyond 0.5 * 1e308 but (mathematically) within 10 * 1e308.
  EXPECT_EQ(CompareElements(DType::kFloat64, r + 8, c + 8, 2, {0.5, 1e-4, false}).mismatched, 2);
  EXPECT_EQ(CompareElements(DType::kFloat64, r + 8, c + 8, 2, {10.0, 1e-4, false}).mismatched, 0);
}

TEST(ElementwiseTest, ExactTypesFindWorstAndStats) {
  int32_t ref[] = {1, 2, 3, 4, 0};
  int32_t cand[] = {1, 5, 3, -4, 7};
  ElementStats s = CompareElements(DType::kInt32, reinterpret_cast<const std::byte*>(ref),
                                   reinterpret_cast<const std::byte*>(cand), 5, {});
  EXPECT_EQ(s.mismatched, 3);
  EXPECT_EQ(s.worst, 3);  // |(-4) - 4| = 8 beats 7 and 3
  EXPECT_EQ(s.max_abs, 8);
  EXPECT_EQ(s.max_rel, 2);  // (5-2)/2 = 1.5, 8/4 = 2; the zero reference has none
  ElementStats same = CompareElements(DType::kInt32, reinterpret_cast<const std::byte*>(ref),
                                      reinterpret_cast<const std::byte*>(ref), 5, {});
  EXPECT_EQ(same.mismatched, 0);
  EXPECT_EQ(same.worst, 0);
  EXPECT_FALSE(same.worst_mismatched);
}

TEST(ElementwiseTest, ExactTypesSplitAcrossThreadsGiveTheSameStats) {
  std::vector<int32_t> ref(1000), cand(1000);
  for (int i = 0; i < 1000; ++i) ref[i] = cand[i] = i;
  cand[10] += 8, cand[600] -= 8, cand[900] += 3;  // a tie for the worst: the first wins
  const auto* r = reinterpret_cast<const std::byte*>(ref.data());
  const auto* c = reinterpret_cast<const std::byte*>(cand.data());
  for (unsigned threads : {1u, 2u, 4u, 9u}) {
    ElementStats s = CompareElements(DType::kInt32, r, c, 1000, {}, ElementSplit{threads, 1});
    EXPECT_EQ(s.mismatched, 3);
    EXPECT_EQ(s.worst, 10);
    EXPECT_EQ(s.max_abs, 8);
    ElementStats same = CompareElements(DType::kInt32, r, r, 1000, {}, ElementSplit{threads, 1});
    EXPECT_EQ(same.worst, 0);
    EXPECT_FALSE(same.worst_mismatched);
  }
}

}  // namespace
}  // namespace kvault
