#pragma once
// The per-element comparison loops behind Compare (check/compare.h): one templated
// tight loop per dtype, no allocation. Internal to the check component.
#include <cstdint>

#include "check/dtype.h"

namespace kvault {

// Statistics of comparing two equally shaped buffers of one dtype.
struct ElementStats {
  int64_t compared = 0;
  int64_t mismatched = 0;
  double max_abs = 0;  // over elements where both values are finite
  double max_rel = 0;  // same, and the reference is non-zero
  // Worst element (see CompareReport): flat index, -1 when there were no elements.
  int64_t worst = -1;
  bool worst_mismatched = false;
  double worst_abs = 0;  // its absolute error (infinity for a NaN/Inf violation)
  // Floating dtypes: the first index of the largest error between finite values, -1
  // when no pair was finite (what merges the stats of parts of one buffer).
  int64_t max_abs_at = -1;
};

struct ElementRule {
  double rtol = 0, atol = 0;
  bool forbid_non_finite = false;  // NanPolicy::kForbid
};

// How a large comparison is split across threads: into parts of at least
// min_part_bytes, at most `threads` of them (0: the machine's cores, at most 8).
// The result is the same as one thread's, element for element.
struct ElementSplit {
  unsigned threads = 0;
  int64_t min_part_bytes = 32 << 20;
};

// REQUIRES: both buffers hold n elements of `dtype` (data may be null when n == 0).
// Floating dtypes use `rule`; integer and bool dtypes compare exactly. Buffers of
// several parts' size are compared by several threads (outputs of several GB).
ElementStats CompareElements(DType dtype, const std::byte* reference, const std::byte* candidate,
                             int64_t n, const ElementRule& rule, const ElementSplit& split = {});

// Whether one pair of floating values passes `rule` (used for Python float scalars).
bool FloatsMatch(double reference, double candidate, const ElementRule& rule);

}  // namespace kvault
