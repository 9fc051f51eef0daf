#pragma once
// What `kvault gen` prints: one progress line per task on stderr, then a per-task
// table (or JSON lines) and totals (docs/cli.md).
#include <ostream>
#include <vector>

#include "agent/gen_runner.h"

namespace kvault::cli {

void PrintGenProgress(std::ostream& out, const agent::GenProgress& p);
void PrintGenTable(std::ostream& out, const std::vector<agent::GenTaskSummary>& tasks);
// Tasks solved, compile and correctness rates over verified candidates, best speedups.
void PrintGenTotals(std::ostream& out, const std::vector<agent::GenTaskSummary>& tasks);

}  // namespace kvault::cli
