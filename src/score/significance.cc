#include "score/significance.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kvault::score {
namespace {

// log C(n, i) - n log 2
double LogBinomHalf(size_t n, size_t i) {
  return std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) - n * std::log(2.0);
}

}  // namespace

double SignTestP(size_t b, size_t c) {
  size_t n = b + c;
  if (n == 0) return 1.0;
  double tail = 0;
  for (size_t i = 0; i <= std::min(b, c); ++i) tail += std::exp(LogBinomHalf(n, i));
  return std::min(1.0, 2 * tail);
}

SignedRank SignedRankTest(const std::vector<double>& d) {
  SignedRank r;
  std::vector<double> nz;
  for (double x : d)
    if (x != 0 && std::isfinite(x)) nz.push_back(x);
  r.n = nz.size();
  if (r.n == 0) return r;
  std::vector<size_t> order(r.n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return std::fabs(nz[a]) < std::fabs(nz[b]); });
  std::vector<long> rank2(r.n);  // doubled ranks: average ranks times 2 are integers
  double tie_term = 0;           // sum of (t^3 - t) over tie groups
  for (size_t i = 0; i < r.n;) {
    size_t j = i;
    while (j + 1 < r.n && std::fabs(nz[order[j + 1]]) == std::fabs(nz[order[i]])) ++j;
    long twice_avg = static_cast<long>(i + 1 + j + 1);  // (first + last) rank, = 2 * average
    for (size_t m = i; m <= j; ++m) rank2[order[m]] = twice_avg;
    double t = static_cast<double>(j - i + 1);
    tie_term += t * t * t - t;
    i = j + 1;
  }
  long w2 = 0, total2 = 0;
  for (size_t i = 0; i < r.n; ++i) {
    total2 += rank2[i];
    if (nz[i] > 0) w2 += rank2[i];
  }
  r.w_plus = w2 / 2.0;
  r.w_minus = (total2 - w2) / 2.0;
  if (r.n <= 50) {
    std::vector<double> dist(total2 + 1, 0.0);  // P(doubled W+ = s)
    dist[0] = 1;
    long reach = 0;
    for (size_t i = 0; i < r.n; ++i) {
      reach += rank2[i];
      for (long s = reach; s >= 0; --s) {
        double with = s >= rank2[i] ? dist[s - rank2[i]] : 0;
        dist[s] = 0.5 * dist[s] + 0.5 * with;
      }
    }
    double le = 0, ge = 0;
    for (long s = 0; s <= total2; ++s) {
      if (s <= w2) le += dist[s];
      if (s >= w2) ge += dist[s];
    }
    r.p = std::min(1.0, 2 * std::min(le, ge));
    return r;
  }
  r.exact = false;
  double n = static_cast<double>(r.n);
  double mean = n * (n + 1) / 4;
  double var = n * (n + 1) * (2 * n + 1) / 24 - tie_term / 48;
  double z = (std::fabs(r.w_plus - mean) - 0.5) / std::sqrt(var);
  r.p = std::min(1.0, std::erfc(std::max(0.0, z) / std::sqrt(2.0)));
  return r;
}

}  // namespace kvault::score
