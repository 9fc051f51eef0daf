#include "corpus/minhash.h"

#include <gtest/gtest.h>

#include <string>

namespace kvault::corpus {
namespace {

std::vector<uint32_t> Range(uint32_t from, uint32_t to) {
  std::vector<uint32_t> v;
  for (uint32_t x = from; x < to; ++x) v.push_back(Sha1Hash32(std::to_string(x)));
  return v;
}

TEST(Sha1Hash32, FirstFourDigestBytesLittleEndian) {
  // FIPS 180 vectors: SHA-1("abc") = a9993e36..., the empty string da39a3ee..., and a
  // 56-byte message that needs a second padding block, 84983e44...
  EXPECT_EQ(Sha1Hash32("abc"), 0x363e99a9u);
  EXPECT_EQ(Sha1Hash32(""), 0xeea339dau);
  EXPECT_EQ(Sha1Hash32("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"), 0x443e9884u);
  EXPECT_EQ(Sha1Hash32(std::string(64, 'x')), 4003671995u);  // hashlib; one full block + padding
}

TEST(Sha1Hash32, PortableAndShaExtensionBlocksAgree) {
  std::string bytes;
  for (int n = 0; n < 300; ++n) {
    EXPECT_EQ(Sha1Hash32(bytes), internal::Sha1Hash32Portable(bytes)) << n;
    bytes += static_cast<char>('a' + (n * 7) % 26);
  }
  EXPECT_EQ(internal::Sha1Hash32Portable("abc"), 0x363e99a9u);
}

TEST(MinHash, PermutationsAreNumpyRandomStateDraws) {
  // datasketch MinHash(num_perm=128, seed=1).permutations (numpy RandomState(1)).
  MinHasher h(128, 1);
  EXPECT_EQ(std::vector<uint32_t>(h.a().begin(), h.a().begin() + 4),
            (std::vector<uint32_t>{3582191691u, 4270784983u, 1892572953u, 3715639441u}));
  EXPECT_EQ(std::vector<uint32_t>(h.b().begin(), h.b().begin() + 4),
            (std::vector<uint32_t>{214548472u, 3287733501u, 2301657549u, 194758406u}));
  EXPECT_EQ(h.a().back(), 348755713u);
  EXPECT_EQ(h.b().back(), 1195370327u);
  uint64_t sum_a = 0, sum_b = 0;
  for (int i = 0; i < 128; ++i) sum_a += h.a()[i], sum_b += h.b()[i];
  EXPECT_EQ(sum_a, 273738405954u);
  EXPECT_EQ(sum_b, 274090808676u);
}

std::vector<std::string> GoldenTokens(int r) {
  std::vector<std::string> t;
  for (int j = 0; j < 8 + r % 60; ++j) t.push_back(std::string("t").append(std::to_string((r * 31 + j * 17) % 97)));
  if (r % 5 == 0) t[3] = "a b";
  return t;
}

TEST(MinHash, SignaturesEqualDatasketchs) {
  // Golden values from bench/corpus_minhash_golden.py (datasketch 2.0.0, MinHash with
  // num_perm=128, seed=1, over the same 300 token lists' 5-token shingles).
  MinHasher h(128, 1);
  uint64_t checksum = 0;
  std::vector<std::vector<uint32_t>> first8;
  for (int r = 0; r < 300; ++r) {
    std::vector<std::string> strings = GoldenTokens(r);
    std::vector<std::string_view> tokens(strings.begin(), strings.end());
    std::vector<uint32_t> sig = h.Signature(MinHashShingles(tokens, 5));
    for (int i = 0; i < 128; ++i) checksum += uint64_t{sig[i]} * (uint64_t(r) * 128 + i + 1);
    if (r == 0 || r == 1 || r == 5) first8.emplace_back(sig.begin(), sig.begin() + 8);
  }
  ASSERT_EQ(first8.size(), 3u);
  EXPECT_EQ(first8[0], (std::vector<uint32_t>{614616177, 549438745, 323837344, 1607503105, 49358064,
                                              800818908, 1301987715, 1046176545}));
  EXPECT_EQ(first8[1], (std::vector<uint32_t>{1818491245, 450706545, 46877513, 940162219, 161752821,
                                              81514628, 2294779753, 648943401}));
  EXPECT_EQ(first8[2], (std::vector<uint32_t>{57247263, 82101123, 208373596, 40264789, 201163481,
                                              298162966, 74019545, 314584303}));
  EXPECT_EQ(checksum, 129496008448070055u);
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
  EXPECT_EQ(MinHasher(16, 3).Signature({}), std::vector<uint32_t>(16, kEmptySlot));
}

TEST(MinHash, ShinglesJoinTokensWithSpacesAndSpellWhitespace) {
  EXPECT_TRUE(MinHashShingles({}, 5).empty());
  EXPECT_EQ(MinHashShingles({"a", "b"}, 5), std::vector<uint32_t>{Sha1Hash32("a b")});
  EXPECT_EQ(MinHashShingles({"a", "b", "c"}, 2),
            (std::vector<uint32_t>{Sha1Hash32("a b"), Sha1Hash32("b c")}));
  EXPECT_EQ(MinHashShingles({"\"x y\"", "z"}, 2), std::vector<uint32_t>{Sha1Hash32("\"x_y\" z")});
}

TEST(MinHash, DecontaminationWindowsAreSortedAndUnique) {
  EXPECT_TRUE(ShingleHashes({}, 5).empty());
  EXPECT_EQ(ShingleHashes({1, 2}, 5).size(), 1u);
  EXPECT_EQ(ShingleHashes({1, 2, 3, 1, 2, 3}, 3).size(), 3u);  // 123, 231, 312
}

TEST(Lsh, ParamsAreDatasketchs) {
  // datasketch.lsh._optimal_param(t, n, 0.5, 0.5) for these thresholds.
  struct Case { double threshold; int num_perm, bands, rows; };
  for (Case c : {Case{0.3, 128, 37, 3}, Case{0.5, 128, 25, 5}, Case{0.7, 128, 14, 9},
                 Case{0.8, 128, 9, 13}, Case{0.9, 128, 5, 25}, Case{0.8, 64, 5, 11}}) {
    LshParams p = OptimalLshParams(c.threshold, c.num_perm);
    EXPECT_EQ(p.bands, c.bands) << c.threshold << " " << c.num_perm;
    EXPECT_EQ(p.rows, c.rows) << c.threshold << " " << c.num_perm;
  }
}

TEST(Lsh, SimilarSignaturesBecomeCandidatesDissimilarDoNot) {
  const int perm = 128;
  MinHasher h(perm, 1);
  std::vector<std::vector<uint32_t>> sets = {Range(0, 1000), Range(20, 1020), Range(50000, 51000)};
  std::vector<uint32_t> sigs;
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
