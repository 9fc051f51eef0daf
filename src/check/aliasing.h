#pragma once
// Outputs that share memory with inputs (docs/adversarial.md, "no aliased outputs").
// A candidate that returns a view of its input (a transpose, a slice, `view`,
// `as_strided`) does no work; its values may still be exactly the answer. The worker
// finds such outputs (python/kvault_worker/aliasing.py) and reports them in the
// `output_aliases` field of its `run` and `reference` replies:
//   "output_aliases": [{"output": "output[1]", "input": 0}, ...]
// (paths as Compare names them). The engine allows an aliased candidate output only
// where the reference's output at the same path aliases an input too (a task whose
// answer is itself a view of its input).
//
// Pure functions; thread-safe.
//
//   auto cand = OutputAliases(run_reply);        // error: malformed field
//   auto ref = OutputAliases(reference_reply);
//   std::string why = ForbiddenAliasing(*cand, *ref);
//   if (!why.empty()) mismatch(why);
#include <cstdint>
#include <string>
#include <vector>

#include "util/json.h"
#include "util/result.h"

namespace kvault {

struct OutputAlias {
  std::string output;  // the output tensor's path, e.g. "output", "output[1]", "output['h']"
  int64_t input = 0;   // the index of the input tensor it shares memory with
};

// The reply's `output_aliases`; none when the field is absent. An error when it is
// not an array of {"output": string, "input": integer >= 0} objects.
Result<std::vector<OutputAlias>> OutputAliases(const Json& reply);

// "" when every aliased candidate output is allowed (its path is among the
// reference's aliased outputs), else one line naming the first one that is not.
std::string ForbiddenAliasing(const std::vector<OutputAlias>& candidate,
                              const std::vector<OutputAlias>& reference);

}  // namespace kvault
