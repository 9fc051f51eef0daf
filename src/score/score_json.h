#pragma once
// JSON form of scores (the `--json` output of `kvault score` and `kvault compare`,
// docs/cli.md). Metric maps are keyed by k or p as text ("1", "0.5"); a metric with
// no contributing task is null; intervals are under "ci" with the same keys, as
// [lo, hi] or null.
#include <string>

#include "score/compare.h"
#include "score/metrics.h"
#include "util/json.h"

namespace kvault::score {

// "1", "0.5", "1.5": the shortest decimal text of a k or p.
std::string KeyText(double v);

// {"tasks", "scored", "solved", "excluded", "unattempted", "short_tasks", "pass_at_k",
//  "comp_at_k", "corr_at_k", "fast_p", "speedup": {...}, "ci": {...},
//  "categories": {name: {...}}, "per_task": [...]} (per_task only when `per_task`).
Json ScoreJson(const RunScore& s, bool per_task);

Json CompareJson(const std::string& run_a, const std::string& run_b, const Comparison& c);

}  // namespace kvault::score
