#include "corpus/dedup.h"

#include <algorithm>
#include <chrono>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "corpus/normalize.h"
#include "corpus/parallel.h"
#include "corpus/record.h"
#include "corpus/union_find.h"

namespace kvault::corpus {
namespace {

using Clock = std::chrono::steady_clock;
double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

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

// Joins items of equal key within a group; returns the first item of each (group,
// key) (the representatives). `passed[rep]`: whether any item of its key passed;
// `failed[rep]`: none passed and one has a verdict (a possible near miss).
std::vector<size_t> UniteExact(const std::vector<DedupItem>& items, const std::vector<std::string>& keys,
                               UnionFind& uf, std::vector<char>& passed, std::vector<char>& failed) {
  std::unordered_map<std::string, size_t> first;
  first.reserve(keys.size());
  std::vector<size_t> reps;
  passed.assign(items.size(), 0);
  std::vector<char> known(items.size(), 0);
  for (size_t i = 0; i < keys.size(); ++i) {
    auto [it, fresh] = first.try_emplace(items[i].group + '\x1f' + keys[i], i);
    if (fresh) reps.push_back(i);
    else uf.Unite(i, it->second);
    passed[it->second] |= items[i].rank.passed();
    known[it->second] |= items[i].rank.known();
  }
  failed.assign(items.size(), 0);
  for (size_t r : reps) failed[r] = known[r] && !passed[r];
  return reps;
}

// A similar pair of a not-passed item and a passed one of its group.
struct NearMiss {
  size_t failed, passed;
  double similarity;
};

// Banding misses a pair of similarity s with probability (1 - s^r)^b (about 1 in 10
// at 0.89 with the default bands), and a near miss is the one pair a task may have:
// in a group of at most kPairsCompared passed-by-not-passed pairs every such pair is
// compared, LSH or not. Appends those LSH did not propose to `pairs` (indices of reps).
constexpr size_t kPairsCompared = 4096;

void AddGroupPairs(const std::vector<DedupItem>& items, const std::vector<size_t>& reps,
                   const std::vector<char>& passed, const std::vector<char>& failed,
                   std::vector<CandidatePair>& pairs) {
  std::unordered_map<std::string_view, std::pair<std::vector<uint32_t>, std::vector<uint32_t>>> groups;
  for (uint32_t r = 0; r < reps.size(); ++r) {
    auto& [good, bad] = groups[items[reps[r]].group];
    if (passed[reps[r]]) good.push_back(r);
    else if (failed[reps[r]]) bad.push_back(r);
  }
  const size_t proposed = pairs.size();  // sorted (LshCandidates)
  for (const auto& [group, sides] : groups) {
    const auto& [good, bad] = sides;
    if (good.size() * bad.size() > kPairsCompared) continue;
    for (uint32_t g : good)
      for (uint32_t b : bad) {
        CandidatePair pair{std::min(g, b), std::max(g, b)};
        if (!std::binary_search(pairs.begin(), pairs.begin() + proposed, pair,
                                [](const CandidatePair& x, const CandidatePair& y) {
                                  return std::tie(x.a, x.b) < std::tie(y.a, y.b);
                                }))
          pairs.push_back(pair);
      }
  }
}

// LSH over the representatives' signatures; verified pairs of one group joined, but a
// passed item and a failed one only noted as a near miss (an unverified one is joined).
std::vector<NearMiss> UniteNear(const std::vector<DedupItem>& items, const std::vector<size_t>& reps,
                                const std::vector<char>& passed, const std::vector<char>& failed,
                                const std::vector<uint32_t>& sigs,
                                const DedupOptions& o, UnionFind& uf, DedupStats& stats) {
  auto t = Clock::now();
  std::vector<uint32_t> rep_sigs(reps.size() * o.num_perm);
  for (size_t r = 0; r < reps.size(); ++r)
    std::copy_n(&sigs[reps[r] * o.num_perm], o.num_perm, &rep_sigs[r * o.num_perm]);
  stats.lsh = OptimalLshParams(o.threshold, o.num_perm);
  std::vector<CandidatePair> pairs = LshCandidates(rep_sigs, reps.size(), o.num_perm, stats.lsh, o.threads);
  stats.candidate_pairs = pairs.size();
  AddGroupPairs(items, reps, passed, failed, pairs);
  stats.near_miss_pairs_compared = pairs.size() - stats.candidate_pairs;
  stats.lsh_s = SecondsSince(t);
  t = Clock::now();
  std::vector<double> similarity(pairs.size());
  ParallelFor(pairs.size(), o.threads, [&](size_t k) {
    similarity[k] = EstimateJaccard(&rep_sigs[pairs[k].a * o.num_perm], &rep_sigs[pairs[k].b * o.num_perm],
                                    o.num_perm);
  });
  // First the near misses; a wrong kernel near a correct one is a negative of its own,
  // never folded into another wrong kernel.
  std::vector<NearMiss> misses;
  std::vector<char> missing(items.size(), 0);
  for (size_t k = 0; k < pairs.size(); ++k) {
    if (similarity[k] < o.threshold) continue;
    if (k < stats.candidate_pairs) ++stats.verified_pairs;
    const size_t a = reps[pairs[k].a], b = reps[pairs[k].b];
    if (items[a].group != items[b].group) {
      ++stats.cross_group_pairs;
    } else if ((passed[a] && failed[b]) || (passed[b] && failed[a])) {
      misses.push_back(passed[a] ? NearMiss{b, a, similarity[k]} : NearMiss{a, b, similarity[k]});
      missing[passed[a] ? b : a] = 1;
    }
  }
  for (size_t k = 0; k < pairs.size(); ++k) {
    const size_t a = reps[pairs[k].a], b = reps[pairs[k].b];
    if (similarity[k] < o.threshold || items[a].group != items[b].group) continue;
    if ((passed[a] && failed[b]) || (passed[b] && failed[a])) continue;  // a near miss
    if (missing[a] || missing[b]) continue;  // a near miss stays alone
    uf.Unite(a, b);
  }
  stats.cluster_s = SecondsSince(t);
  return misses;
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
    if (!Counts(r, false)) continue;
    rank.engine_class = std::max(rank.engine_class, StatusClass(r.status));
    if (IsPassed(r) && r.speedup) rank.engine_speedup = std::max(rank.engine_speedup, *r.speedup);
  }
  return rank;
}

std::string DedupGroupOf(const KernelRecord& record) {
  return record.task.name + '\x1f' + record.task.reference_sha256 + '\x1f' + record.language;
}

const char* DuplicateKindName(DuplicateKind kind) {
  switch (kind) {
    case DuplicateKind::kExact: return "exact";
    case DuplicateKind::kNear: return "near";
    case DuplicateKind::kNearMiss: return "near_miss";
  }
  return "";
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
  std::vector<char> passed, failed;
  std::vector<size_t> reps = UniteExact(items, result.keys, uf, passed, failed);
  std::vector<NearMiss> misses;
  if (options.near) misses = UniteNear(items, reps, passed, failed, sigs, options, uf, stats);

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
  // A kept not-passed item links to the kept member of the passed cluster it is most
  // similar to (ties: the first found).
  std::unordered_map<size_t, NearMiss> link;  // kept failed item -> its closest miss
  for (const NearMiss& m : misses) {
    const size_t failed = best[uf.Find(m.failed)];
    if (items[failed].rank.passed() || uf.Find(m.failed) == uf.Find(m.passed)) continue;
    auto [it, fresh] = link.try_emplace(failed, m);
    if (!fresh && m.similarity > it->second.similarity) it->second = m;
  }
  for (const auto& [failed, m] : link) {
    result.duplicates.push_back({failed, best[uf.Find(m.passed)], DuplicateKind::kNearMiss});
    ++stats.near_misses;
  }
  std::sort(result.duplicates.begin(), result.duplicates.end(),
            [](const DuplicateOf& a, const DuplicateOf& b) { return a.item < b.item; });
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
