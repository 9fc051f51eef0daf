#pragma once
// Compare: does a candidate's output match the reference's? Rules (docs/task-format.md):
// the trees must have the same shape (tuple and list are interchangeable sequences;
// lengths must match; dict keys must match in any order); ints, bools, strings and
// None compare exactly, Python floats with the tolerance; an "unsupported" node on
// either side is a mismatch. Tensors must have equal shape and dtype (no broadcasting,
// no promotion); then floating-point elements must satisfy
// |cand - ref| <= atol + rtol * |ref| and the NaN/Inf policy, and integer and bool
// elements must be equal.
//
// Pure function of its inputs; thread-safe. Runs in one pass over the data with no
// per-element allocation. The comparison on the device (python/kvault_worker/handoff.py
// compare_tensor) applies the same element rule; tests/golden/compare.json holds both
// to the same statistics (compare_golden_test.cc, python/tests/test_golden.py).
//
//   CompareReport r = Compare(*reference, *candidate, Tolerance{});
//   if (!r.match) report(r.message);   // e.g. "output[1]: shape [4, 8] != reference [4, 9]"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "check/tensor_file.h"

namespace kvault {

struct Tolerance {
  // Unset: the default for the reference tensor's dtype: 1e-4 for float64 and
  // float32 (and for Python floats), 1e-2 for float16 and bfloat16. Integer and bool
  // tensors are always compared exactly.
  std::optional<double> rtol, atol;
  enum class NanPolicy {
    kMatch,   // Default. NaN only where the reference has NaN; an infinity only where
              // the reference has the same infinity.
    kForbid,  // any NaN or infinity in the candidate is a mismatch
  };
  NanPolicy nan_policy = NanPolicy::kMatch;
  // atol multiplied by max(1, RMS of the reference tensor's finite values): for inputs
  // the engine redrew (docs/adversarial.md, "Input distributions"), where cancellation
  // leaves the rounding of a long fp32 reduction above an absolute 1e-4 at the outputs
  // near zero, while an error of the output's own scale still fails.
  bool atol_by_rms = false;
};

struct CompareReport {
  bool match = false;
  // One line naming the first problem (in tree order), e.g.
  //   "output[1]: shape [4, 8] != reference [4, 9]"
  //   "output: 12 of 1024 elements differ beyond rtol=0.0001 atol=0.0001; worst at
  //    [3, 7]: got 1.5, expected 1.0 (abs err 0.5, rel err 0.5)"
  // or a summary when everything matches.
  std::string message;
  // Over all tensor elements where both values are finite. The relative error is
  // |cand - ref| / |ref| over elements whose reference is non-zero.
  double max_abs_error = 0;
  double max_rel_error = 0;
  // The worst element: among mismatching elements the one with the largest absolute
  // error (a NaN/Inf violation counts as infinitely large; ties go to the first), or
  // when all match, the element with the largest absolute error. Empty path when no
  // tensor element was compared.
  std::string worst_path;            // e.g. "output[0]['h']"
  std::vector<int64_t> worst_index;  // multi-dimensional index into that tensor
  int64_t mismatched = 0;            // elements outside tolerance, over all tensors
  int64_t compared = 0;              // tensor elements compared
};

CompareReport Compare(const TensorFile& reference, const TensorFile& candidate, const Tolerance& tolerance);

// The message of a report that matches: "1024 elements match (max abs err 0, max rel err 0)".
std::string MatchSummary(int64_t compared, double max_abs_error, double max_rel_error);

// The rtol/atol that Compare uses for a reference tensor of `dtype` (0, 0 for
// integer and bool dtypes, which are always exact).
struct ResolvedTolerance {
  double rtol = 0, atol = 0;
};
ResolvedTolerance ResolveTolerance(const Tolerance& tolerance, DType dtype);

}  // namespace kvault
