#pragma once
// ConstantControl: whether one constant per output tensor would pass every
// correctness run of a case. A reference whose outputs are constant or near zero
// over every seed and input distribution (a task whose operations cancel out, an
// activation after a normalisation that leaves nothing) makes the tolerance
// meaningless: a candidate that returns zeros passes it (docs/adversarial.md,
// "Degenerate references").
//
//   ConstantControl control;
//   for each correctness run of the case:
//     control.Add(reference_file, tolerance);   // or control.Unknown() when unread
//   if (control.Degenerate()) ... the case cannot tell a kernel from a constant
//
// A tensor is watched by the range [lo, hi] of its finite values over all runs; it
// is constant-like while every value lies within the task's tolerance of the range's
// midpoint (checked at the ends of the range, and at 0 when the range holds it: the
// tolerance's relative part is smallest there). A non-finite value, a change of
// structure, or a range too wide ends the watch for good, so a real output costs a
// few elements per run. Not thread-safe.
#include <cstdint>
#include <string>
#include <vector>

#include "check/compare.h"
#include "check/tensor_file.h"

namespace kvault {

class ConstantControl {
 public:
  // The fewest runs a verdict rests on: one run of a scalar output is a constant.
  static constexpr int kMinRuns = 3;

  // Adds the reference output of one run.
  void Add(const TensorFile& reference, const Tolerance& tolerance);
  // One run whose reference output was not read (compared on the device): no verdict.
  void Unknown() { unknown_ = true; }
  // True when at least kMinRuns runs were added, none unknown, and every output tensor
  // stayed within tolerance of one constant in all of them.
  bool Degenerate() const;
  // "output 0 in [0, 0]; output 1 in [-1e-06, 2e-06]": the ranges seen.
  std::string Describe() const;

 private:
  struct Span {
    double lo = 0, hi = 0;
    bool seen = false;  // a finite value was added
    bool wide = false;  // no one constant fits
    double rtol = 0, atol = 0;
  };
  static bool Fits(const Span& s);

  std::vector<Span> spans_;
  int runs_ = 0;
  bool unknown_ = false;
  bool varied_ = false;  // the output's structure changed between runs
};

}  // namespace kvault
