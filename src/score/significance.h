#pragma once
// Paired significance tests used by CompareRuns (docs/scoring.md). Pure functions.
#include <cstddef>
#include <vector>

namespace kvault::score {

// Exact two-sided sign test (McNemar's exact test on discordant pairs): b pairs went
// one way, c the other, each way with probability 1/2 under the null hypothesis.
//   p = min(1, 2 * sum_{i=0..min(b,c)} C(b+c, i) / 2^(b+c));  p = 1 when b + c = 0.
double SignTestP(size_t b, size_t c);

struct SignedRank {
  size_t n = 0;         // non-zero differences (zeros are dropped)
  double w_plus = 0;    // sum of the ranks of positive differences (ties: average ranks)
  double w_minus = 0;
  double p = 1;         // two-sided p-value
  bool exact = true;    // exact null distribution (n <= 50), else normal approximation
};

// Wilcoxon signed-rank test of the paired differences `d` against a zero median.
// Exact: the null distribution of W+ over doubled (integer) ranks, each rank included
// with probability 1/2; p = min(1, 2 * min(P(W+ <= w), P(W+ >= w))). For n > 50, the
// normal approximation with the tie-corrected variance and a 0.5 continuity correction.
SignedRank SignedRankTest(const std::vector<double>& d);

}  // namespace kvault::score
