#include "corpus/minhash.h"

#include <gtest/gtest.h>

#include <random>

namespace kvault::corpus {
namespace {

std::vector<uint64_t> Range(uint64_t from, uint64_t to) {
  std::vector<uint64_t> v;
  for (uint64_t x = from; x < to; ++x) v.push_back(x * 0x9e3779b97f4a7c15ULL);
  std::sort(v.begin(), v.end());
  return v;
}

TEST(MinHash, EstimateTracksTrueJaccard) {
  MinHasher h(256, 7);
  // |A ∩ B| = 600, |A ∪ B| = 1000: J = 0.6
  auto a = h.Signature(Range(0, 800)), b = h.Signature(Range(200, 1000));
  EXPECT_NEAR(EstimateJaccard(a.data(), b.data(), 256), 0.6, 0.08);
  EXPECT_EQ(EstimateJaccard(a.data(), a.data(), 256), 1.0);
  auto c = h.Signature(Range(5000, 6000));
  EXPECT_LT(EstimateJaccard(a.data(), c.data(), 256), 0.05);
}

TEST(MinHash, SameSeedSameSignature) {
  EXPECT_EQ(MinHasher(64, 3).Signature(Range(0, 50)), MinHasher(64, 3).Signature(Range(0, 50)));
  EXPECT_NE(MinHasher(64, 3).Signature(Range(0, 50)), MinHasher(64, 4).Signature(Range(0, 50)));
}

TEST(MinHash, ShinglesOfShortAndEmptyInput) {
  EXPECT_TRUE(ShingleHashes({}, 5).empty());
  EXPECT_EQ(ShingleHashes({1, 2}, 5).size(), 1u);
  EXPECT_EQ(ShingleHashes({1, 2, 3, 1, 2, 3}, 3).size(), 3u);  // 123, 231, 312
}

TEST(Lsh, ParamsFitAndFollowTheThreshold) {
  LshParams p = OptimalLshParams(0.8, 128);
  EXPECT_LE(p.bands * p.rows, 128);
  EXPECT_GT(p.bands, 1);
  LshParams low = OptimalLshParams(0.3, 128);
  EXPECT_LT(low.rows, p.rows);  // a lower threshold: shorter bands
}

TEST(Lsh, SimilarSignaturesBecomeCandidatesDissimilarDoNot) {
  const int perm = 128;
  MinHasher h(perm, 1);
  std::vector<std::vector<uint64_t>> sets = {Range(0, 1000), Range(20, 1020), Range(50000, 51000)};
  std::vector<uint64_t> sigs;
  for (auto& s : sets) {
    auto sig = h.Signature(s);
    sigs.insert(sigs.end(), sig.begin(), sig.end());
  }
  auto pairs = LshCandidates(sigs, 3, perm, OptimalLshParams(0.8, perm), 2);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0], (CandidatePair{0, 1}));
}

}  // namespace
}  // namespace kvault::corpus
