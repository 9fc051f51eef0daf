#pragma once
// Percentile bootstrap over tasks (docs/scoring.md).
//
// Every suite-level metric is a ratio of per-task sums, value = T(Σ num_t / Σ den_t):
// a mean over tasks has num_t = the task's value, den_t = 1; a geometric mean has
// num_t = a sum of logs, den_t = their count, and T = exp. A resample draws the tasks
// with replacement; resamples where Σ den = 0 are skipped.
//
// Determinism: the resamples depend only on (seed, number of tasks, resample index),
// so every metric of one run is resampled over the same task draws, and the same
// input gives the same interval on every platform (std::mt19937_64 is fully specified;
// indices are drawn as rng() % n, whose bias is below 2^-40 for n < 2^24).
#include <cstdint>
#include <optional>
#include <vector>

namespace kvault::score {

struct BootstrapOptions {
  int resamples = 2000;          // Default: 2000. 0 turns intervals off.
  uint64_t seed = 20250131;      // Default: 20250131.
  double confidence = 0.95;      // Default: 0.95 (2.5th and 97.5th percentiles).
};

struct TaskTerms {
  std::vector<double> num, den;  // one entry per task; REQUIRES: same size
  bool log_scale = false;        // value = exp(Σnum / Σden)
  void Add(double n, double d) { num.push_back(n); den.push_back(d); }
  static TaskTerms Log() {
    TaskTerms t;
    t.log_scale = true;
    return t;
  }
};

// A point estimate and its interval; each absent when no task contributes (Σ den = 0).
struct Estimate {
  std::optional<double> value, lo, hi;
};

// The point value of `terms`, or nullopt when Σ den = 0.
std::optional<double> PointValue(const TaskTerms& terms);

// The point value and the percentile interval of `terms`.
Estimate BootstrapEstimate(const TaskTerms& terms, const BootstrapOptions& options);

// Linear-interpolated q-quantile (0 <= q <= 1) of sorted values. REQUIRES: non-empty, sorted.
double Quantile(const std::vector<double>& sorted, double q);

}  // namespace kvault::score
