#pragma once
// Exact and near deduplication of kernels (docs/corpus.md, "Deduplication").
//
//   std::vector<DedupItem> items = ...;       // one per record: id, source, rank
//   DedupResult r = Deduplicate(items, DedupOptions{.threshold = 0.8});
//   for (const DuplicateOf& d : r.duplicates)  // items[d.item] duplicates items[d.kept]
//
// Exact: equal normalised source (normalize.h). Near: MinHash over shingles of the
// normalised tokens (minhash.h: datasketch's scheme, so the same signatures), LSH
// candidates verified by estimated Jaccard >= threshold.
// Clusters are the connected components of both relations (union-find); each keeps
// its best-verified member (VerifiedRank) and marks the others duplicates of it, kind
// "exact" when their normalised source equals the kept member's, else "near".
// Thread safety: Deduplicate is pure; it runs on options.threads threads.
#include <cstdint>
#include <string>
#include <vector>

#include "corpus/minhash.h"

namespace kvault::corpus {

struct KernelRecord;

// How well a record is verified; a greater rank is kept. Compared by status class
// (passed > ran or compiled > rejected by the toolchain > no usable result), then
// speedup, then the number of results.
struct VerifiedRank {
  int status_class = 0;  // 3 passed, 2 compiled (ran or failed at run time), 1 compile/parse error, 0 none
  double speedup = 0;    // best speedup of a passed result, 0 none
  int results = 0;
  auto operator<=>(const VerifiedRank&) const = default;
};
VerifiedRank RankOf(const KernelRecord& record);

struct DedupItem {
  std::string id;
  std::string source;    // the candidate's code (the question + answer for "qa")
  std::string language;  // selects the tokenizer (LanguageFamilyOf)
  VerifiedRank rank;
};

struct DedupOptions {
  double threshold = 0.8;  // estimated Jaccard for a near duplicate, in (0, 1)
  int num_perm = 128;      // MinHash slots
  int shingle = 5;         // tokens per shingle
  uint32_t seed = 1;       // of the hash family (numpy RandomState's seed in datasketch)
  int threads = 0;         // 0: one per hardware thread
  bool near = true;        // false: exact deduplication only
};

enum class DuplicateKind { kExact, kNear };
const char* DuplicateKindName(DuplicateKind kind);  // "exact" | "near"

struct DuplicateOf {
  size_t item;  // index into the items
  size_t kept;  // the kept member of its cluster
  DuplicateKind kind;
};

struct DedupStats {
  size_t items = 0;
  size_t exact_duplicates = 0;  // marked kind exact
  size_t near_duplicates = 0;   // marked kind near
  size_t clusters = 0;          // clusters of two or more items
  size_t candidate_pairs = 0;   // from LSH
  size_t verified_pairs = 0;    // of those, estimated Jaccard >= threshold
  LshParams lsh;
  double normalize_s = 0, minhash_s = 0, lsh_s = 0, cluster_s = 0;
};

struct DedupResult {
  std::vector<DuplicateOf> duplicates;  // sorted by item
  DedupStats stats;
  std::vector<std::string> keys;        // normalised-source key of each item
};

// REQUIRES: 0 < threshold < 1, num_perm >= 1, shingle >= 1.
DedupResult Deduplicate(const std::vector<DedupItem>& items, const DedupOptions& options);

// The normalised tokens of an item joined by spaces, one line: what the shingles are
// built from (for comparisons with other MinHash implementations).
std::string NormalizedLine(const DedupItem& item);

}  // namespace kvault::corpus
