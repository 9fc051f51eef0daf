#include "corpus/minhash.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

#include "corpus/normalize.h"
#include "corpus/parallel.h"

namespace kvault::corpus {
namespace {

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// (a * x + b) mod 2^61 - 1 for a, b, x < 2^61 - 1.
inline uint64_t MulAddMod61(uint64_t a, uint64_t x, uint64_t b) {
  unsigned __int128 p = static_cast<unsigned __int128>(a) * x + b;
  uint64_t r = static_cast<uint64_t>(p & kMersenne61) + static_cast<uint64_t>(p >> 61);
  r = (r & kMersenne61) + (r >> 61);
  return r >= kMersenne61 ? r - kMersenne61 : r;
}

// Integral over [lo, hi] of f by Simpson's rule on `steps` (even) intervals.
template <class F>
double Integrate(F f, double lo, double hi, int steps = 200) {
  double h = (hi - lo) / steps, sum = f(lo) + f(hi);
  for (int i = 1; i < steps; ++i) sum += f(lo + i * h) * (i % 2 ? 4 : 2);
  return sum * h / 3;
}

uint64_t BandHash(const uint64_t* slots, int rows, int band) {
  uint64_t h = 0xcbf29ce484222325ULL ^ static_cast<uint64_t>(band);
  return HashWindow(slots, static_cast<size_t>(rows)) ^ (h * 0x9e3779b97f4a7c15ULL);
}

// The pairs of one band: (hash, index) sorted, runs of equal hashes paired.
void BandPairs(const std::vector<uint64_t>& sigs, size_t count, int num_perm, int band, int rows,
               size_t max_bucket, std::vector<CandidatePair>& out) {
  std::vector<std::pair<uint64_t, uint32_t>> keyed(count);
  for (size_t i = 0; i < count; ++i)
    keyed[i] = {BandHash(&sigs[i * num_perm + band * rows], rows, band), static_cast<uint32_t>(i)};
  std::sort(keyed.begin(), keyed.end());
  for (size_t start = 0; start < count;) {
    size_t end = start + 1;
    while (end < count && keyed[end].first == keyed[start].first) ++end;
    for (size_t x = start; x < end; ++x)
      for (size_t y = x + 1; y < end && y - x <= max_bucket; ++y)
        out.push_back({keyed[x].second, keyed[y].second});
    start = end;
  }
}

}  // namespace

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

MinHasher::MinHasher(int num_perm, uint64_t seed) : a_(num_perm), b_(num_perm) {
  uint64_t state = seed;
  for (int i = 0; i < num_perm; ++i) {
    do a_[i] = SplitMix64(state) & kMersenne61; while (a_[i] == 0 || a_[i] == kMersenne61);
    do b_[i] = SplitMix64(state) & kMersenne61; while (b_[i] == kMersenne61);
  }
}

std::vector<uint64_t> MinHasher::Signature(const std::vector<uint64_t>& shingles) const {
  std::vector<uint64_t> sig(a_.size());
  SignatureInto(shingles, sig.data());
  return sig;
}

void MinHasher::SignatureInto(const std::vector<uint64_t>& shingles, uint64_t* out) const {
  const size_t n = a_.size();
  std::fill(out, out + n, kMersenne61);
  for (uint64_t s : shingles) {
    uint64_t x = s % kMersenne61;
    for (size_t i = 0; i < n; ++i) out[i] = std::min(out[i], MulAddMod61(a_[i], x, b_[i]));
  }
}

double EstimateJaccard(const uint64_t* a, const uint64_t* b, int num_perm) {
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

std::vector<CandidatePair> LshCandidates(const std::vector<uint64_t>& signatures, size_t count,
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
