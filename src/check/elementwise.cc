#include "check/elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

namespace kvault {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Decoders from raw little-endian bytes to double, one per floating dtype.
struct LoadF64 {
  static double At(const std::byte* p, int64_t i) { return LoadUnaligned<double>(p + 8 * i); }
};
struct LoadF32 {
  static double At(const std::byte* p, int64_t i) { return LoadUnaligned<float>(p + 4 * i); }
};
struct LoadF16 {
  static double At(const std::byte* p, int64_t i) { return HalfBitsToFloat(LoadUnaligned<uint16_t>(p + 2 * i)); }
};
struct LoadBF16 {
  static double At(const std::byte* p, int64_t i) {
    return BFloat16BitsToFloat(LoadUnaligned<uint16_t>(p + 2 * i));
  }
};

// The NaN/Inf policy for a pair where at least one value is not finite.
inline bool NonFiniteMatches(double r, double c, bool forbid) {
  if (forbid) return false;  // the candidate is non-finite, or cannot be near a non-finite reference
  if (std::isnan(c)) return std::isnan(r);
  if (std::isinf(c)) return c == r;
  return false;  // finite candidate, NaN/Inf reference
}

// Running statistics of one floating comparison (see ElementStats).
struct FloatAccumulator {
  int64_t mismatched = 0;
  double max_abs = -1;  // -1: no finite pair seen yet
  int64_t max_abs_at = -1;
  double max_rel = 0;
  int64_t worst_bad = -1;
  double worst_bad_abs = -1;

  void Finite(double diff, double mag, int64_t i) {
    if (diff > max_abs) max_abs = diff, max_abs_at = i;
    if (mag > 0 && diff > max_rel * mag) max_rel = diff / mag;
  }
  void Bad(double abs, int64_t i) {
    ++mismatched;
    if (abs > worst_bad_abs) worst_bad_abs = abs, worst_bad = i;
  }
};

// The exact per-element rule, used on blocks that hold a mismatch or a non-finite value.
template <class Load>
void CompareBlockSlowly(const std::byte* ref, const std::byte* cand, int64_t begin, int64_t end,
                        const ElementRule& rule, FloatAccumulator& acc) {
  for (int64_t i = begin; i < end; ++i) {
    const double r = Load::At(ref, i), c = Load::At(cand, i);
    if (std::isfinite(r) && std::isfinite(c)) {
      const double diff = std::fabs(c - r), mag = std::fabs(r);
      acc.Finite(diff, mag, i);
      if (!(diff <= rule.atol + rule.rtol * mag)) acc.Bad(diff, i);
    } else if (!NonFiniteMatches(r, c, rule.forbid_non_finite)) {
      acc.Bad(kInf, i);
    }
  }
}

// Blocks of kBlock elements go through a branch-light loop that only establishes
// "every pair is finite and within tolerance" plus the block's largest error; the
// rare block where that fails is redone by CompareBlockSlowly, and the rare block
// that raises the maximum is rescanned for the index. Four independent maxima break
// the dependency chain of one running maximum.
template <class Load>
ElementStats CompareFloating(const std::byte* ref, const std::byte* cand, int64_t n, const ElementRule& rule) {
  constexpr int64_t kBlock = 2048;
  constexpr double kMaxFinite = std::numeric_limits<double>::max();
  const double rtol = rule.rtol, atol = rule.atol;
  FloatAccumulator acc;
  for (int64_t begin = 0; begin < n; begin += kBlock) {
    const int64_t end = std::min(n, begin + kBlock);
    double block_max[4] = {0, 0, 0, 0};
    double rel = acc.max_rel;
    int64_t failed = 0;
    auto step = [&](int64_t i, double& lane_max) {
      const double r = Load::At(ref, i), c = Load::At(cand, i);
      const double diff = std::fabs(c - r), mag = std::fabs(r);
      const double bound = std::min(atol + rtol * mag, kMaxFinite);
      const bool pass = diff <= bound;  // false for NaN, and for Inf on either side
      failed += !pass;
      const double d = pass ? diff : 0.0;
      lane_max = d > lane_max ? d : lane_max;
      if (d > rel * mag && mag > 0) [[unlikely]] rel = d / mag;
    };
    int64_t i = begin;
    for (; i + 4 <= end; i += 4) {
      step(i, block_max[0]);
      step(i + 1, block_max[1]);
      step(i + 2, block_max[2]);
      step(i + 3, block_max[3]);
    }
    for (; i < end; ++i) step(i, block_max[0]);
    if (failed > 0) {
      CompareBlockSlowly<Load>(ref, cand, begin, end, rule, acc);
      continue;
    }
    acc.max_rel = rel;
    const double bmax = std::max(std::max(block_max[0], block_max[1]), std::max(block_max[2], block_max[3]));
    if (bmax > acc.max_abs) {
      for (int64_t j = begin; j < end; ++j) {
        if (std::fabs(Load::At(cand, j) - Load::At(ref, j)) == bmax) {
          acc.max_abs = bmax, acc.max_abs_at = j;
          break;
        }
      }
    }
  }
  ElementStats s;
  s.compared = n;
  s.mismatched = acc.mismatched;
  s.max_abs = std::max(acc.max_abs, 0.0);
  s.max_rel = acc.max_rel;
  s.max_abs_at = acc.max_abs_at;
  if (acc.worst_bad >= 0) {
    s.worst = acc.worst_bad, s.worst_mismatched = true, s.worst_abs = acc.worst_bad_abs;
  } else if (acc.max_abs_at >= 0) {
    s.worst = acc.max_abs_at, s.worst_abs = acc.max_abs;
  } else if (n > 0) {
    s.worst = 0;  // only matching non-finite pairs
  }
  return s;
}

template <class T>
ElementStats CompareExact(const std::byte* ref, const std::byte* cand, int64_t n) {
  ElementStats s;
  s.compared = n;
  if (n == 0) return s;
  s.worst = 0;
  if (std::memcmp(ref, cand, static_cast<size_t>(n) * sizeof(T)) == 0) return s;
  for (int64_t i = 0; i < n; ++i) {
    const T r = LoadUnaligned<T>(ref + i * sizeof(T));
    const T c = LoadUnaligned<T>(cand + i * sizeof(T));
    if (r == c) continue;
    ++s.mismatched;
    const double diff = std::fabs(static_cast<double>(c) - static_cast<double>(r));
    const double mag = std::fabs(static_cast<double>(r));
    if (diff > s.max_abs) s.max_abs = diff;
    if (mag > 0 && diff / mag > s.max_rel) s.max_rel = diff / mag;
    if (!s.worst_mismatched || diff > s.worst_abs) {
      s.worst = i, s.worst_mismatched = true, s.worst_abs = diff;
    }
  }
  return s;
}

}  // namespace

bool FloatsMatch(double r, double c, const ElementRule& rule) {
  if (std::isfinite(r) && std::isfinite(c)) return std::fabs(c - r) <= rule.atol + rule.rtol * std::fabs(r);
  return NonFiniteMatches(r, c, rule.forbid_non_finite);
}

namespace {

ElementStats CompareOnOneThread(DType dtype, const std::byte* reference, const std::byte* candidate,
                                int64_t n, const ElementRule& rule) {
  switch (dtype) {
    case DType::kFloat64: return CompareFloating<LoadF64>(reference, candidate, n, rule);
    case DType::kFloat32: return CompareFloating<LoadF32>(reference, candidate, n, rule);
    case DType::kFloat16: return CompareFloating<LoadF16>(reference, candidate, n, rule);
    case DType::kBFloat16: return CompareFloating<LoadBF16>(reference, candidate, n, rule);
    case DType::kInt64: return CompareExact<int64_t>(reference, candidate, n);
    case DType::kInt32: return CompareExact<int32_t>(reference, candidate, n);
    case DType::kInt16: return CompareExact<int16_t>(reference, candidate, n);
    case DType::kInt8: return CompareExact<int8_t>(reference, candidate, n);
    case DType::kUInt8:
    case DType::kBool: return CompareExact<uint8_t>(reference, candidate, n);
  }
  return {};
}

// The stats of consecutive parts (part i starts at element offsets[i]) as one
// thread would have computed them over the whole buffer: the worst element is the
// largest mismatch, else the largest error between finite values, the first of
// equals either way.
ElementStats Merge(const std::vector<ElementStats>& parts, const std::vector<int64_t>& offsets) {
  ElementStats s;
  int bad = -1, finite = -1;
  for (size_t i = 0; i < parts.size(); ++i) {
    const ElementStats& p = parts[i];
    s.compared += p.compared;
    s.mismatched += p.mismatched;
    s.max_abs = std::max(s.max_abs, p.max_abs);
    s.max_rel = std::max(s.max_rel, p.max_rel);
    if (p.worst_mismatched && (bad < 0 || p.worst_abs > parts[bad].worst_abs)) bad = static_cast<int>(i);
    if (p.max_abs_at >= 0 && (finite < 0 || p.max_abs > parts[finite].max_abs)) finite = static_cast<int>(i);
  }
  if (finite >= 0) s.max_abs_at = offsets[finite] + parts[finite].max_abs_at;
  if (bad >= 0) {
    s.worst = offsets[bad] + parts[bad].worst, s.worst_mismatched = true, s.worst_abs = parts[bad].worst_abs;
  } else if (finite >= 0) {
    s.worst = s.max_abs_at, s.worst_abs = parts[finite].max_abs;
  } else if (s.compared > 0) {
    s.worst = 0;
  }
  return s;
}

}  // namespace

ElementStats CompareElements(DType dtype, const std::byte* reference, const std::byte* candidate,
                             int64_t n, const ElementRule& rule, const ElementSplit& split) {
  const int64_t bytes = n * static_cast<int64_t>(DTypeSize(dtype));
  const unsigned cores = split.threads ? split.threads : std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
  const int64_t by_size = split.min_part_bytes > 0 ? bytes / split.min_part_bytes : cores;
  const int64_t parts = std::min<int64_t>(cores, by_size);
  if (parts < 2) return CompareOnOneThread(dtype, reference, candidate, n, rule);
  const size_t width = DTypeSize(dtype);
  std::vector<int64_t> offsets(static_cast<size_t>(parts));
  std::vector<ElementStats> stats(static_cast<size_t>(parts));
  std::vector<std::thread> threads;
  for (int64_t i = 0; i < parts; ++i) offsets[static_cast<size_t>(i)] = n * i / parts;
  for (int64_t i = 0; i < parts; ++i) {
    const int64_t begin = offsets[static_cast<size_t>(i)];
    const int64_t end = i + 1 < parts ? offsets[static_cast<size_t>(i + 1)] : n;
    auto run = [&, i, begin, end] {
      stats[static_cast<size_t>(i)] =
          CompareOnOneThread(dtype, reference + begin * width, candidate + begin * width, end - begin, rule);
    };
    if (i + 1 == parts) {
      run();  // the last part on this thread
    } else {
      threads.emplace_back(run);
    }
  }
  for (auto& t : threads) t.join();
  return Merge(stats, offsets);
}

}  // namespace kvault
