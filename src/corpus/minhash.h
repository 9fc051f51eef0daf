#pragma once
// MinHash signatures over token shingles and LSH banding (docs/corpus.md,
// "Deduplication").
//
//   MinHasher hasher(128, /*seed=*/1);
//   std::vector<uint64_t> sig = hasher.Signature(ShingleHashes(token_hashes, 5));
//   double j = EstimateJaccard(sig_a, sig_b);              // fraction of equal slots
//   LshParams p = OptimalLshParams(0.8, 128);                // bands x rows <= 128
//   std::vector<CandidatePair> pairs = LshCandidates(sigs, n, 128, p, /*threads=*/2);
//
// Hash family: h_i(x) = (a_i * x + b_i) mod (2^61 - 1), a_i, b_i drawn from a
// splitmix64 stream of `seed`; x is the shingle's 64-bit hash reduced mod 2^61 - 1.
// Thread safety: a MinHasher is immutable after construction; the free functions are
// pure (LshCandidates starts and joins its own threads).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvault::corpus {

inline constexpr uint64_t kMersenne61 = (uint64_t{1} << 61) - 1;

// The hashes of every window of `k` consecutive tokens, sorted and unique. Fewer than
// `k` tokens: one shingle of all of them; none: empty.
std::vector<uint64_t> ShingleHashes(const std::vector<uint64_t>& token_hashes, size_t k);

class MinHasher {
 public:
  // REQUIRES: num_perm >= 1.
  MinHasher(int num_perm, uint64_t seed);
  int num_perm() const { return static_cast<int>(a_.size()); }
  // The signature of a set of shingle hashes; every slot kMersenne61 for an empty set.
  std::vector<uint64_t> Signature(const std::vector<uint64_t>& shingles) const;
  // The same, written to out[0 .. num_perm).
  void SignatureInto(const std::vector<uint64_t>& shingles, uint64_t* out) const;

 private:
  std::vector<uint64_t> a_, b_;
};

// The fraction of slots in which two signatures of `num_perm` slots agree.
double EstimateJaccard(const uint64_t* a, const uint64_t* b, int num_perm);

// LSH banding: `bands` bands of `rows` slots each (bands * rows <= num_perm).
struct LshParams {
  int bands = 0;
  int rows = 0;
};

// The (bands, rows) minimising fp_weight * P(false positive) + fn_weight * P(false
// negative), where P(candidate | Jaccard s) = 1 - (1 - s^rows)^bands and the two
// probabilities are its integrals below and above `threshold`. REQUIRES: 0 < threshold
// < 1, num_perm >= 1.
LshParams OptimalLshParams(double threshold, int num_perm, double fp_weight = 0.5,
                           double fn_weight = 0.5);

struct CandidatePair {
  uint32_t a, b;  // a < b, indices of signatures
  bool operator==(const CandidatePair&) const = default;
};

// Every pair of signatures that share the hash of at least one band, once each, sorted.
// `signatures` holds `count` signatures of `num_perm` slots back to back. A bucket of
// more than `max_bucket` members contributes each member paired with the next
// `max_bucket` ones in index order (a bound on work for degenerate inputs).
std::vector<CandidatePair> LshCandidates(const std::vector<uint64_t>& signatures, size_t count,
                                         int num_perm, LshParams params, int threads,
                                         size_t max_bucket = 512);

}  // namespace kvault::corpus
