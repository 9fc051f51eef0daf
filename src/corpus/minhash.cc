#include "corpus/minhash.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <cpuid.h>
#include <immintrin.h>

#include "corpus/normalize.h"
#include "corpus/parallel.h"

namespace kvault::corpus {
namespace {

inline uint32_t Rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

inline uint32_t LoadBigEndian32(const unsigned char* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}

// One 64-byte block of SHA-1 (FIPS 180-4, 6.1.2).
void Sha1Block(uint32_t h[5], const unsigned char* block) {
  uint32_t w[80];
  for (int i = 0; i < 16; ++i) w[i] = LoadBigEndian32(block + 4 * i);
  for (int i = 16; i < 80; ++i) w[i] = Rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  auto round = [&](uint32_t f, uint32_t k, uint32_t wi) {
    uint32_t t = Rotl(a, 5) + f + e + k + wi;
    e = d, d = c, c = Rotl(b, 30), b = a, a = t;
  };
  for (int i = 0; i < 20; ++i) round((b & c) | (~b & d), 0x5a827999, w[i]);
  for (int i = 20; i < 40; ++i) round(b ^ c ^ d, 0x6ed9eba1, w[i]);
  for (int i = 40; i < 60; ++i) round((b & c) | (b & d) | (c & d), 0x8f1bbcdc, w[i]);
  for (int i = 60; i < 80; ++i) round(b ^ c ^ d, 0xca62c1d6, w[i]);
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
}

// The same block with the x86 SHA extensions: 20 groups of 4 rounds, message words
// four to a vector (w[4j] in the top lane). Only called where HasShaExtensions().
template <int kFunction>
__attribute__((target("sha,sse4.1"))) inline void Sha1Groups(__m128i (&w)[20], int first, int last,
                                                              __m128i& abcd, __m128i& prev) {
  for (int j = first; j < last; ++j) {
    if (j >= 4)
      w[j] = _mm_sha1msg2_epu32(_mm_xor_si128(_mm_sha1msg1_epu32(w[j - 4], w[j - 3]), w[j - 2]), w[j - 1]);
    __m128i e = _mm_sha1nexte_epu32(prev, w[j]);
    prev = abcd;
    abcd = _mm_sha1rnds4_epu32(abcd, e, kFunction);
  }
}

__attribute__((target("sha,sse4.1"))) void Sha1BlockShaExtensions(uint32_t h[5],
                                                                 const unsigned char* block) {
  const __m128i reverse = _mm_set_epi64x(0x0001020304050607LL, 0x08090a0b0c0d0e0fLL);
  __m128i w[20];
  for (int j = 0; j < 4; ++j)
    w[j] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 16 * j)), reverse);
  const __m128i abcd0 = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h)), 0x1b);
  const __m128i e0 = _mm_set_epi32(static_cast<int>(h[4]), 0, 0, 0);
  // Group 0 takes e directly; nexte(prev, w) for the others adds rotl(prev.a, 30).
  __m128i abcd = _mm_sha1rnds4_epu32(abcd0, _mm_add_epi32(e0, w[0]), 0), prev = abcd0;
  Sha1Groups<0>(w, 1, 5, abcd, prev);
  Sha1Groups<1>(w, 5, 10, abcd, prev);
  Sha1Groups<2>(w, 10, 15, abcd, prev);
  Sha1Groups<3>(w, 15, 20, abcd, prev);
  __m128i e = _mm_sha1nexte_epu32(prev, e0);
  abcd = _mm_shuffle_epi32(_mm_add_epi32(abcd, abcd0), 0x1b);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(h), abcd);
  h[4] = static_cast<uint32_t>(_mm_extract_epi32(e, 3));
}

bool HasShaExtensions() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & bit_SSE4_1) || !(ecx & bit_SSSE3)) return false;
  return __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (ebx & bit_SHA);
}

// The block function for this CPU, chosen on first use (safe from static initializers).
internal::Sha1BlockFn ChosenSha1Block() {
  static const internal::Sha1BlockFn chosen = HasShaExtensions() ? Sha1BlockShaExtensions : Sha1Block;
  return chosen;
}

// MurmurHash3's 32-bit finalizer, a bijection.
inline uint32_t Fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  return h ^ (h >> 16);
}

// numpy's legacy bounded draw of one integer in [low, high) for uint32 (masked
// rejection sampling on MT19937's 32-bit outputs).
uint32_t NumpyBoundedUint32(std::mt19937& mt, uint64_t low, uint64_t high) {
  uint64_t range = high - low - 1;
  if (range == 0) return static_cast<uint32_t>(low);
  if (range == 0xffffffffu) return static_cast<uint32_t>(low + mt());
  uint32_t mask = static_cast<uint32_t>(range);
  for (int s = 1; s < 32; s *= 2) mask |= mask >> s;
  uint32_t v;
  do v = static_cast<uint32_t>(mt()) & mask; while (v > range);
  return static_cast<uint32_t>(low + v);
}

// out[i] = min(out[i], a[i] * x + b[i]) for every shingle x: the hot loop. Slots go
// in blocks of kLanes held in one vector register across all shingles (an AVX2 clone
// where the machine has it); the fixed-width inner loops are what the compiler
// vectorises at -O2.
constexpr size_t kLanes = 8;

__attribute__((target_clones("avx2", "default")))
void MinOverShingles(const uint32_t* a, const uint32_t* b, size_t slots, const uint32_t* xs,
                     size_t count, uint32_t* out) {
  size_t i = 0;
  for (; i + kLanes <= slots; i += kLanes) {
    uint32_t la[kLanes], lb[kLanes], acc[kLanes];
    for (size_t l = 0; l < kLanes; ++l) la[l] = a[i + l], lb[l] = b[i + l], acc[l] = out[i + l];
    for (size_t k = 0; k < count; ++k)
      for (size_t l = 0; l < kLanes; ++l) acc[l] = std::min(acc[l], la[l] * xs[k] + lb[l]);
    for (size_t l = 0; l < kLanes; ++l) out[i + l] = acc[l];
  }
  for (; i < slots; ++i)
    for (size_t k = 0; k < count; ++k) out[i] = std::min(out[i], a[i] * xs[k] + b[i]);
}

// Integral over [lo, hi] of f by Simpson's rule on `steps` (even) intervals.
template <class F>
double Integrate(F f, double lo, double hi, int steps = 2000) {
  double h = (hi - lo) / steps, sum = f(lo) + f(hi);
  for (int i = 1; i < steps; ++i) sum += f(lo + i * h) * (i % 2 ? 4 : 2);
  return sum * h / 3;
}

uint64_t BandHash(const uint32_t* slots, int rows) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int i = 0; i < rows; ++i) h = (h ^ slots[i]) * 0x100000001b3ULL ^ (h >> 29);
  return h;
}

// The pairs of one band: (hash, index) sorted, runs of equal hashes paired where their
// slots are equal.
void BandPairs(const std::vector<uint32_t>& sigs, size_t count, int num_perm, int band, int rows,
               size_t max_bucket, std::vector<CandidatePair>& out) {
  auto slots = [&](uint32_t i) { return &sigs[size_t{i} * num_perm + band * rows]; };
  std::vector<std::pair<uint64_t, uint32_t>> keyed(count);
  for (size_t i = 0; i < count; ++i)
    keyed[i] = {BandHash(slots(static_cast<uint32_t>(i)), rows), static_cast<uint32_t>(i)};
  std::sort(keyed.begin(), keyed.end());
  for (size_t start = 0; start < count;) {
    size_t end = start + 1;
    while (end < count && keyed[end].first == keyed[start].first) ++end;
    for (size_t x = start; x < end; ++x)
      for (size_t y = x + 1; y < end && y - x <= max_bucket; ++y)
        if (std::memcmp(slots(keyed[x].second), slots(keyed[y].second), rows * sizeof(uint32_t)) == 0)
          out.push_back({keyed[x].second, keyed[y].second});
    start = end;
  }
}

}  // namespace

void AppendShingleToken(std::string& out, std::string_view token) {
  for (char c : token) out += (c == ' ' || c == '\t' || c == '\n' || c == '\r') ? '_' : c;
}

uint32_t Sha1Hash32(std::string_view bytes) { return internal::Sha1Hash32With(bytes, ChosenSha1Block()); }

namespace internal {
uint32_t Sha1Hash32Portable(std::string_view bytes) { return Sha1Hash32With(bytes, Sha1Block); }

uint32_t Sha1Hash32With(std::string_view bytes, Sha1BlockFn block_fn) {
  uint32_t h[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t n = bytes.size(), full = n / 64;
  for (size_t i = 0; i < full; ++i) block_fn(h, p + 64 * i);
  unsigned char tail[128] = {};
  size_t rest = n - 64 * full, tail_size = rest + 9 <= 64 ? 64 : 128;
  std::memcpy(tail, p + 64 * full, rest);
  tail[rest] = 0x80;
  uint64_t bits = uint64_t{n} * 8;
  for (int i = 0; i < 8; ++i) tail[tail_size - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
  for (size_t off = 0; off < tail_size; off += 64) block_fn(h, tail + off);
  return __builtin_bswap32(h[0]);  // digest bytes 0..3 are h[0] big-endian
}
}  // namespace internal

std::vector<uint32_t> MinHashShingles(const std::vector<std::string_view>& tokens, size_t k) {
  std::vector<uint32_t> out;
  if (tokens.empty()) return out;
  std::string line;  // the tokens joined by spaces; each shingle is a substring
  std::vector<size_t> starts;
  starts.reserve(tokens.size() + 1);
  for (std::string_view t : tokens) {
    starts.push_back(line.size());
    AppendShingleToken(line, t);
    line += ' ';
  }
  starts.push_back(line.size());
  size_t width = std::min(k, tokens.size());
  out.reserve(tokens.size() - width + 1);
  for (size_t i = 0; i + width <= tokens.size(); ++i)
    out.push_back(Sha1Hash32(std::string_view(line).substr(starts[i], starts[i + width] - starts[i] - 1)));
  return out;
}

std::vector<uint64_t> ShingleHashes(const std::vector<uint64_t>& token_hashes, size_t k) {
  std::vector<uint64_t> out;
  if (token_hashes.empty()) return out;
  size_t width = std::min(k, token_hashes.size());
  out.reserve(token_hashes.size() - width + 1);
  for (size_t i = 0; i + width <= token_hashes.size(); ++i)
    out.push_back(HashWindow(&token_hashes[i], width));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

MinHasher::MinHasher(int num_perm, uint32_t seed) : a_(num_perm), b_(num_perm) {
  std::mt19937 mt(seed);
  for (uint32_t& a : a_) a = NumpyBoundedUint32(mt, 0, uint64_t{1} << 31) * 2 + 1;
  for (uint32_t& b : b_) b = NumpyBoundedUint32(mt, 0, uint64_t{1} << 32);
}

std::vector<uint32_t> MinHasher::Signature(const std::vector<uint32_t>& shingles) const {
  std::vector<uint32_t> sig(a_.size());
  SignatureInto(shingles, sig.data());
  return sig;
}

void MinHasher::SignatureInto(const std::vector<uint32_t>& shingles, uint32_t* out) const {
  std::fill(out, out + a_.size(), kEmptySlot);
  std::vector<uint32_t> mixed(shingles.size());
  std::transform(shingles.begin(), shingles.end(), mixed.begin(), Fmix32);
  MinOverShingles(a_.data(), b_.data(), a_.size(), mixed.data(), mixed.size(), out);
}

double EstimateJaccard(const uint32_t* a, const uint32_t* b, int num_perm) {
  int equal = 0;
  for (int i = 0; i < num_perm; ++i) equal += a[i] == b[i];
  return static_cast<double>(equal) / num_perm;
}

LshParams OptimalLshParams(double threshold, int num_perm, double fp_weight, double fn_weight) {
  LshParams best;
  double best_error = std::numeric_limits<double>::infinity();
  for (int bands = 1; bands <= num_perm; ++bands) {
    for (int rows = 1; bands * rows <= num_perm; ++rows) {
      auto p = [&](double s) { return 1 - std::pow(1 - std::pow(s, rows), bands); };
      double fp = Integrate(p, 0, threshold);
      double fn = Integrate([&](double s) { return 1 - p(s); }, threshold, 1);
      double error = fp_weight * fp + fn_weight * fn;
      if (error < best_error) best_error = error, best = {bands, rows};
    }
  }
  return best;
}

std::vector<CandidatePair> LshCandidates(const std::vector<uint32_t>& signatures, size_t count,
                                         int num_perm, LshParams params, int threads,
                                         size_t max_bucket) {
  std::vector<std::vector<CandidatePair>> per_band(params.bands);
  ParallelFor(static_cast<size_t>(params.bands), threads, [&](size_t band) {
    BandPairs(signatures, count, num_perm, static_cast<int>(band), params.rows, max_bucket,
              per_band[band]);
  });
  std::vector<CandidatePair> all;
  for (auto& v : per_band) all.insert(all.end(), v.begin(), v.end());
  for (auto& p : all)
    if (p.a > p.b) std::swap(p.a, p.b);
  std::sort(all.begin(), all.end(), [](const CandidatePair& x, const CandidatePair& y) {
    return x.a != y.a ? x.a < y.a : x.b < y.b;
  });
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

}  // namespace kvault::corpus
