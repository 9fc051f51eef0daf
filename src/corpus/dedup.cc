#include "corpus/dedup.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <unordered_map>

#include "corpus/normalize.h"
#include "corpus/parallel.h"
#include "corpus/record.h"

namespace kvault::corpus {
namespace {

using Clock = std::chrono::steady_clock;
double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

class UnionFind {
 public:
  explicit UnionFind(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  size_t Find(size_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Unite(size_t a, size_t b) {
    a = Find(a), b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<size_t> parent_;
};

int StatusClass(const std::string& status) {
  if (status == "passed") return 3;
  if (status == "compile_error" || status == "parse_error" || status == "unsupported") return 1;
  if (status.empty() || status == "task_error" || status == "infra_error") return 0;
  return 2;  // it compiled: ran and failed, or compile-only
}

// Normalises every item and computes its signature (when `near`).
void Signatures(const std::vector<DedupItem>& items, const DedupOptions& o,
                std::vector<std::string>& keys, std::vector<uint32_t>& sigs) {
  MinHasher hasher(o.num_perm, o.seed);
  keys.assign(items.size(), {});
  if (o.near) sigs.assign(items.size() * o.num_perm, 0);
  ParallelFor(items.size(), o.threads, [&](size_t i) {
    NormalizedView n = NormalizeView(items[i].source, LanguageFamilyOf(items[i].language, items[i].source));
    keys[i] = std::move(n.key);
    if (o.near) hasher.SignatureInto(MinHashShingles(n.tokens, o.shingle), &sigs[i * o.num_perm]);
  });
}

// Joins items of equal key; returns the first item of each key (the representatives).
std::vector<size_t> UniteExact(const std::vector<std::string>& keys, UnionFind& uf) {
  std::unordered_map<std::string_view, size_t> first;
  first.reserve(keys.size());
  std::vector<size_t> reps;
  for (size_t i = 0; i < keys.size(); ++i) {
    auto [it, fresh] = first.try_emplace(keys[i], i);
    if (fresh) reps.push_back(i);
    else uf.Unite(i, it->second);
  }
  return reps;
}

// LSH over the representatives' signatures; verified pairs joined.
void UniteNear(const std::vector<size_t>& reps, const std::vector<uint32_t>& sigs,
               const DedupOptions& o, UnionFind& uf, DedupStats& stats) {
  auto t = Clock::now();
  std::vector<uint32_t> rep_sigs(reps.size() * o.num_perm);
  for (size_t r = 0; r < reps.size(); ++r)
    std::copy_n(&sigs[reps[r] * o.num_perm], o.num_perm, &rep_sigs[r * o.num_perm]);
  stats.lsh = OptimalLshParams(o.threshold, o.num_perm);
  std::vector<CandidatePair> pairs = LshCandidates(rep_sigs, reps.size(), o.num_perm, stats.lsh, o.threads);
  stats.candidate_pairs = pairs.size();
  stats.lsh_s = SecondsSince(t);
  t = Clock::now();
  std::vector<char> similar(pairs.size());
  ParallelFor(pairs.size(), o.threads, [&](size_t k) {
    similar[k] = EstimateJaccard(&rep_sigs[pairs[k].a * o.num_perm], &rep_sigs[pairs[k].b * o.num_perm],
                                 o.num_perm) >= o.threshold;
  });
  for (size_t k = 0; k < pairs.size(); ++k) {
    if (!similar[k]) continue;
    ++stats.verified_pairs;
    uf.Unite(reps[pairs[k].a], reps[pairs[k].b]);
  }
  stats.cluster_s = SecondsSince(t);
}

bool Better(const DedupItem& a, const DedupItem& b) {
  if (a.rank != b.rank) return a.rank > b.rank;
  return a.id < b.id;
}

}  // namespace

VerifiedRank RankOf(const KernelRecord& record) {
  VerifiedRank rank;
  rank.results = static_cast<int>(record.results.size());
  for (const VerificationResult& r : record.results) {
    rank.status_class = std::max(rank.status_class, StatusClass(r.status));
    if (IsPassed(r) && r.speedup) rank.speedup = std::max(rank.speedup, *r.speedup);
  }
  return rank;
}

const char* DuplicateKindName(DuplicateKind kind) {
  return kind == DuplicateKind::kExact ? "exact" : "near";
}

DedupResult Deduplicate(const std::vector<DedupItem>& items, const DedupOptions& options) {
  DedupResult result;
  DedupStats& stats = result.stats;
  stats.items = items.size();
  auto t = Clock::now();
  std::vector<uint32_t> sigs;
  Signatures(items, options, result.keys, sigs);
  stats.normalize_s = SecondsSince(t);

  UnionFind uf(items.size());
  std::vector<size_t> reps = UniteExact(result.keys, uf);
  if (options.near) UniteNear(reps, sigs, options, uf, stats);

  std::unordered_map<size_t, size_t> best;  // root -> best member
  std::unordered_map<size_t, size_t> sizes;
  for (size_t i = 0; i < items.size(); ++i) {
    size_t root = uf.Find(i);
    ++sizes[root];
    auto [it, fresh] = best.try_emplace(root, i);
    if (!fresh && Better(items[i], items[it->second])) it->second = i;
  }
  for (const auto& [root, n] : sizes) stats.clusters += n > 1;
  for (size_t i = 0; i < items.size(); ++i) {
    size_t kept = best[uf.Find(i)];
    if (kept == i) continue;
    DuplicateKind kind = result.keys[i] == result.keys[kept] ? DuplicateKind::kExact : DuplicateKind::kNear;
    (kind == DuplicateKind::kExact ? stats.exact_duplicates : stats.near_duplicates)++;
    result.duplicates.push_back({i, kept, kind});
  }
  return result;
}

std::string NormalizedLine(const DedupItem& item) {
  NormalizedView n = NormalizeView(item.source, LanguageFamilyOf(item.language, item.source));
  std::string line;
  for (std::string_view t : n.tokens) {
    if (!line.empty()) line += ' ';
    AppendShingleToken(line, t);
  }
  return line;
}

}  // namespace kvault::corpus
