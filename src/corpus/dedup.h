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
// Only items of one group (task and language) are compared: a kernel of another task
// is never its duplicate. A near pair of a passed and a not-passed kernel is not
// joined: the wrong one is a near miss, kept and linked to the passed one (the best
// negative for preference pairs), and not joined with other wrong kernels either;
// exact duplicates collapse whatever their results.
// Clusters are the connected components of both relations (union-find); each keeps
// its best-verified member (VerifiedRank) and marks the others duplicates of it, kind
// "exact" when their normalised source equals the kept member's, else "near".
// Thread safety: Deduplicate is pure; it runs on options.threads threads.
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "corpus/minhash.h"

namespace kvault::corpus {

struct KernelRecord;

// How well a record is verified; a greater rank is kept. Compared first by the
// results of this vault's engine, then by all results (imports' claims too): status
// class (passed > ran or compiled > rejected by the toolchain > no usable result),
// speedup; then the number of results.
struct VerifiedRank {
  int status_class = 0;  // 3 passed, 2 compiled (ran or failed at run time), 1 compile/parse error, 0 none
  double speedup = 0;    // best speedup of a passed result, 0 none
  int results = 0;
  int engine_class = 0;  // the status class of the engine's results alone
  double engine_speedup = 0;
  auto Key() const { return std::tie(engine_class, engine_speedup, status_class, speedup, results); }
  bool operator==(const VerifiedRank& o) const { return Key() == o.Key(); }
  auto operator<=>(const VerifiedRank& o) const { return Key() <=> o.Key(); }
  // Which side of a near miss: the engine's verdict where it has one, else the claims'.
  bool passed() const { return engine_class > 0 ? engine_class == 3 : status_class == 3; }
  // Whether it has a verdict at all: an unverified kernel is no negative of anything.
  bool known() const { return status_class > 0; }
};
VerifiedRank RankOf(const KernelRecord& record);

// The group a record is deduplicated within: its task (name and reference) and language.
std::string DedupGroupOf(const KernelRecord& record);

struct DedupItem {
  std::string id;
  std::string source;    // the candidate's code (the question + answer for "qa")
  std::string language;  // selects the tokenizer (LanguageFamilyOf)
  VerifiedRank rank;
  std::string group;     // DedupGroupOf; items of different groups are never joined
};

struct DedupOptions {
  double threshold = 0.8;  // estimated Jaccard for a near duplicate, in (0, 1)
  int num_perm = 128;      // MinHash slots
  int shingle = 5;         // tokens per shingle
  uint32_t seed = 1;       // of the hash family (numpy RandomState's seed in datasketch)
  int threads = 0;         // 0: one per hardware thread
  bool near = true;        // false: exact deduplication only
};

// kNearMiss is no duplicate: a kept, not-passed item near a passed one of its group.
enum class DuplicateKind { kExact, kNear, kNearMiss };
const char* DuplicateKindName(DuplicateKind kind);  // "exact" | "near" | "near_miss"

struct DuplicateOf {
  size_t item;  // index into the items
  size_t kept;  // the kept member of its cluster; for kNearMiss the passed item it misses
  DuplicateKind kind;
};

struct DedupStats {
  size_t items = 0;
  size_t exact_duplicates = 0;  // marked kind exact
  size_t near_duplicates = 0;   // marked kind near
  size_t near_misses = 0;       // kept, linked to a passed item (kind near_miss)
  size_t cross_group_pairs = 0;  // similar pairs of different groups, not joined
  size_t clusters = 0;          // clusters of two or more items
  size_t candidate_pairs = 0;   // from LSH
  size_t verified_pairs = 0;    // of those, estimated Jaccard >= threshold
  size_t near_miss_pairs_compared = 0;  // passed-by-not-passed pairs of small groups LSH missed
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
