#pragma once
// Per-task sample metrics (docs/scoring.md). Pure functions, no state.
#include <cstddef>

namespace kvault::score {

// Unbiased pass@k for one task with n samples of which c are correct:
//   pass@k = 1 - C(n-c, k) / C(n, k),
// computed as 1 - prod_{i=n-c+1..n} (1 - k/i), which never forms a binomial
// coefficient. Edge cases (documented in docs/scoring.md):
//   n = 0            -> 0 (an unattempted task is a failure)
//   n < k            -> 1 if c > 0 else 0 (the k - n missing samples count as failures)
//   n - c < k <= n   -> 1 (every k-subset holds a correct sample; includes c = n > 0)
//   c = 0            -> 0
// REQUIRES: k >= 1, c <= n.
double PassAtK(size_t n, size_t c, size_t k);

}  // namespace kvault::score
