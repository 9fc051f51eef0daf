#pragma once
// MinHash signatures over token shingles and LSH banding (docs/corpus.md,
// "Deduplication"), in the scheme of datasketch 2.0's MinHash (its default "affine32"
// permutations and sha1_hash32), so that for the same shingles a signature here equals
// datasketch's slot for slot.
//
//   MinHasher hasher(128, /*seed=*/1);
//   std::vector<uint32_t> sig = hasher.Signature(MinHashShingles(tokens, 5));
//   double j = EstimateJaccard(sig_a, sig_b, 128);          // fraction of equal slots
//   LshParams p = OptimalLshParams(0.8, 128);                // bands x rows <= 128
//   std::vector<CandidatePair> pairs = LshCandidates(sigs, n, 128, p, /*threads=*/2);
//
// Shingle: k consecutive tokens, each spelled as AppendShingleToken writes it, joined
// by single spaces; its hash is the first 4 bytes of its SHA-1 read little-endian.
// Slot i of a signature: min over shingles x of a_i * fmix32(x) + b_i mod 2^32, with
// fmix32 MurmurHash3's finalizer, a_i odd. a and b are drawn as numpy's
// RandomState(seed) draws them: randint(0, 2^31, num_perm) * 2 + 1, then
// randint(0, 2^32, num_perm), from MT19937 seeded with `seed`.
// Thread safety: a MinHasher is immutable after construction; the free functions are
// pure (LshCandidates starts and joins its own threads).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvault::corpus {

// The value of an empty signature's slots.
inline constexpr uint32_t kEmptySlot = 0xffffffffu;

// Appends `token` as it is spelled in a shingle: ' ', '\t', '\n' and '\r' become '_'.
void AppendShingleToken(std::string& out, std::string_view token);

// The first 4 bytes of the SHA-1 digest of `bytes`, little-endian. Uses the x86 SHA
// extensions where the CPU has them.
uint32_t Sha1Hash32(std::string_view bytes);

namespace internal {
using Sha1BlockFn = void (*)(uint32_t state[5], const unsigned char* block);
uint32_t Sha1Hash32With(std::string_view bytes, Sha1BlockFn block_fn);
uint32_t Sha1Hash32Portable(std::string_view bytes);  // never the SHA extensions (tests)
}  // namespace internal

// The shingle hashes of every window of `k` consecutive tokens, in window order
// (repeats kept: they do not change a signature). Fewer than `k` tokens: one shingle
// of all of them; none: empty.
std::vector<uint32_t> MinHashShingles(const std::vector<std::string_view>& tokens, size_t k);

// The hashes of every window of `k` consecutive 64-bit token hashes (HashWindow),
// sorted and unique. Fewer than `k` tokens: one window of all of them; none: empty.
std::vector<uint64_t> ShingleHashes(const std::vector<uint64_t>& token_hashes, size_t k);

class MinHasher {
 public:
  // REQUIRES: num_perm >= 1.
  MinHasher(int num_perm, uint32_t seed);
  int num_perm() const { return static_cast<int>(a_.size()); }
  const std::vector<uint32_t>& a() const { return a_; }
  const std::vector<uint32_t>& b() const { return b_; }
  // The signature of a set of shingle hashes; every slot kEmptySlot for an empty set.
  std::vector<uint32_t> Signature(const std::vector<uint32_t>& shingles) const;
  // The same, written to out[0 .. num_perm).
  void SignatureInto(const std::vector<uint32_t>& shingles, uint32_t* out) const;

 private:
  std::vector<uint32_t> a_, b_;
};

// The fraction of slots in which two signatures of `num_perm` slots agree.
double EstimateJaccard(const uint32_t* a, const uint32_t* b, int num_perm);

// LSH banding: `bands` bands of `rows` slots each (bands * rows <= num_perm).
struct LshParams {
  int bands = 0;
  int rows = 0;
};

// The (bands, rows) minimising fp_weight * P(false positive) + fn_weight * P(false
// negative), where P(candidate | Jaccard s) = 1 - (1 - s^rows)^bands and the two
// probabilities are its integrals below and above `threshold`; bands ascending, then
// rows, the first minimum kept (datasketch's MinHashLSH choice). REQUIRES: 0 <
// threshold < 1, num_perm >= 1.
LshParams OptimalLshParams(double threshold, int num_perm, double fp_weight = 0.5,
                           double fn_weight = 0.5);

struct CandidatePair {
  uint32_t a, b;  // a < b, indices of signatures
  bool operator==(const CandidatePair&) const = default;
};

// Every pair of signatures equal in all slots of at least one band, once each, sorted.
// `signatures` holds `count` signatures of `num_perm` slots back to back. A bucket of
// more than `max_bucket` members contributes each member paired with the next
// `max_bucket` ones in index order (a bound on work for degenerate inputs).
std::vector<CandidatePair> LshCandidates(const std::vector<uint32_t>& signatures, size_t count,
                                         int num_perm, LshParams params, int threads,
                                         size_t max_bucket = 512);

}  // namespace kvault::corpus
