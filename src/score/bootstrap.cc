#include "score/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace kvault::score {
namespace {

std::optional<double> Finish(double num, double den, bool log_scale) {
  if (den <= 0) return std::nullopt;
  double v = num / den;
  return log_scale ? std::exp(v) : v;
}

}  // namespace

std::optional<double> PointValue(const TaskTerms& terms) {
  double num = 0, den = 0;
  for (size_t i = 0; i < terms.num.size(); ++i) {
    num += terms.num[i];
    den += terms.den[i];
  }
  return Finish(num, den, terms.log_scale);
}

double Quantile(const std::vector<double>& sorted, double q) {
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Estimate BootstrapEstimate(const TaskTerms& terms, const BootstrapOptions& options) {
  Estimate e;
  e.value = PointValue(terms);
  const size_t n = terms.num.size();
  if (!e.value || n == 0 || options.resamples <= 0) return e;
  std::mt19937_64 rng(options.seed);
  std::vector<double> values;
  values.reserve(options.resamples);
  for (int b = 0; b < options.resamples; ++b) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; ++i) {
      size_t t = static_cast<size_t>(rng() % n);
      num += terms.num[t];
      den += terms.den[t];
    }
    if (auto v = Finish(num, den, terms.log_scale)) values.push_back(*v);
  }
  if (values.empty()) return e;
  std::sort(values.begin(), values.end());
  double alpha = 1.0 - options.confidence;
  e.lo = Quantile(values, alpha / 2);
  e.hi = Quantile(values, 1 - alpha / 2);
  return e;
}

}  // namespace kvault::score
