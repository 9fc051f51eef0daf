#pragma once
// `kvault corpus stats` (docs/corpus.md, "Stats"): counts of the vault's records by
// source, language, status, kind, operation, licence and hardware, and the speedup
// distribution of correct kernels; as JSON, a text table or an HTML page with inline
// SVG (src/report's charts). The dataset card of `export --format hf` uses the same.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "corpus/corpus_store.h"
#include "util/json.h"

namespace kvault::corpus {

struct CorpusStats {
  int64_t records = 0;
  int64_t duplicates = 0;    // records marked duplicates (kind exact or near)
  int64_t near_misses = 0;   // records linked to a passed kernel they nearly match
  int64_t contaminated = 0;  // records with a contamination mark
  // status: the best counted result's (the engine's, and imports' claims when the
  // filter counts them; "unverified" without one; "qa" for qa records); claimed
  // status: the best result of any origin ("none" without one).
  std::map<std::string, int64_t> by_source, by_language, by_status, by_claimed_status, by_kind,
      by_operation, by_license, by_pipeline, by_hardware;
  std::vector<double> speedups;  // each correct kernel's RecordSpeed median, sorted
  std::vector<std::pair<std::string, int64_t>> contamination_by_suite;
};

// Visits every record the filter passes.
Result<CorpusStats> ComputeStats(CorpusStore& vault, const RecordFilter& filter);

// The q-quantile (0..1) of sorted values, linear between neighbours; nullopt when empty.
std::optional<double> Quantile(const std::vector<double>& sorted, double q);

Json StatsToJson(const CorpusStats& stats);
std::string StatsText(const CorpusStats& stats);
std::string StatsHtml(const CorpusStats& stats, const std::string& vault_path);

}  // namespace kvault::corpus
