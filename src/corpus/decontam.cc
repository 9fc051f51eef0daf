#include "corpus/decontam.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <system_error>

#include "corpus/minhash.h"
#include "corpus/normalize.h"
#include "corpus/op_signature.h"
#include "corpus/parallel.h"
#include "util/files.h"

namespace kvault::corpus {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kShared = UINT32_MAX;  // an n-gram of more than one task

const std::map<std::string, std::string, std::less<>>& SourceExtensions() {
  static const std::map<std::string, std::string, std::less<>> m = {
      {".py", "python"}, {".cu", "cuda"}, {".cuh", "cuda"}, {".hip", "hip"}, {".cpp", "cpp"},
      {".cc", "cpp"},    {".c", "c"},     {".h", "cpp"},    {".hpp", "cpp"}};
  return m;
}

bool Hidden(const fs::path& relative) {
  for (const auto& part : relative) {
    std::string s = part.string();
    if ((s.size() > 1 && s[0] == '.' && s != "..") || s == "__pycache__") return true;
  }
  return false;
}

std::optional<OpSignature> SignatureOf(const std::string& python_source) {
  if (python_source.empty()) return std::nullopt;
  return ReferenceSignature(python_source);
}

}  // namespace

Result<std::vector<BenchmarkTask>> LoadBenchmarkSuite(const std::string& folder) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return Error{"suite folder " + folder + " is not a readable folder"};
  std::vector<BenchmarkTask> tasks;
  for (fs::recursive_directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    fs::path rel = fs::relative(it->path(), folder);
    auto ext = SourceExtensions().find(it->path().extension().string());
    if (ext == SourceExtensions().end() || Hidden(rel)) continue;
    auto text = ReadFile(it->path().string());
    if (!text) return Error{"cannot read " + it->path().string() + ": " + text.error()};
    BenchmarkTask t;
    t.name = rel.parent_path().empty() ? rel.stem().string() : (rel.parent_path() / rel.stem()).string();
    t.path = it->path().string();
    t.source = std::move(*text);
    t.language = ext->second;
    tasks.push_back(std::move(t));
  }
  if (ec) return Error{"cannot list " + folder + ": " + ec.message()};
  if (tasks.empty()) return Error{"suite folder " + folder + " holds no source files (.py .cu .hip .cpp ...)"};
  std::sort(tasks.begin(), tasks.end(),
            [](const BenchmarkTask& a, const BenchmarkTask& b) { return a.name < b.name; });
  return tasks;
}

std::vector<uint64_t> SourceNgrams(const std::string& source, const std::string& language, int n) {
  NormalizedSource norm = Normalize(source, LanguageFamilyOf(language, source), RenameStyle::kErased);
  std::vector<uint64_t> hashes = TokenHashes(norm.tokens);
  std::vector<uint64_t> out;
  if (hashes.size() < static_cast<size_t>(n)) return out;
  return ShingleHashes(hashes, static_cast<size_t>(n));
}

SuiteIndex::SuiteIndex(const std::vector<BenchmarkTask>& tasks, const DecontamOptions& options)
    : options_(options), task_ngrams_(tasks.size()), task_has_signature_(tasks.size()) {
  std::unordered_map<uint64_t, uint32_t> count;  // tasks holding each n-gram
  std::vector<std::vector<uint64_t>> grams(tasks.size());
  for (size_t t = 0; t < tasks.size(); ++t) {
    grams[t] = SourceNgrams(tasks[t].source, tasks[t].language, options.ngram);
    for (uint64_t g : grams[t]) ++count[g];
  }
  size_t max_tasks = std::max<size_t>(1, static_cast<size_t>(options.max_task_share * tasks.size()));
  for (size_t t = 0; t < tasks.size(); ++t) {
    for (uint64_t g : grams[t]) {
      if (count[g] > max_tasks) continue;
      auto [it, fresh] = ngram_task_.try_emplace(g, static_cast<uint32_t>(t));
      if (!fresh) it->second = kShared;
      ++task_ngrams_[t];
    }
    if (!options.signature || tasks[t].language != "python") continue;
    if (auto sig = SignatureOf(tasks[t].source)) {
      task_has_signature_[t] = 1;
      signature_tasks_[sig->key].push_back(static_cast<uint32_t>(t));
      shape_free_tasks_[sig->shape_free_key].push_back(static_cast<uint32_t>(t));
    }
  }
}

std::vector<ContaminationHit> SuiteIndex::Check(const DecontamItem& item) const {
  std::vector<uint64_t> grams = SourceNgrams(item.candidate_source, item.language, options_.ngram);
  std::vector<uint64_t> ref = SourceNgrams(item.reference_source, "python", options_.ngram);
  grams.insert(grams.end(), ref.begin(), ref.end());
  std::sort(grams.begin(), grams.end());
  grams.erase(std::unique(grams.begin(), grams.end()), grams.end());
  std::map<uint32_t, size_t> found;  // task -> its distinctive n-grams found
  for (uint64_t g : grams) {
    auto it = ngram_task_.find(g);
    if (it != ngram_task_.end() && it->second != kShared) ++found[it->second];
  }
  std::vector<ContaminationHit> hits;
  for (const auto& [task, n] : found) {
    double share = static_cast<double>(n) / static_cast<double>(task_ngrams_[task]);
    if (share >= options_.min_overlap) hits.push_back({0, task, "ngram", share});
  }
  if (options_.signature) {
    if (auto sig = SignatureOf(item.reference_source)) {
      std::vector<uint32_t> exact;
      if (auto it = signature_tasks_.find(sig->key); it != signature_tasks_.end()) exact = it->second;
      for (uint32_t task : exact) hits.push_back({0, task, "signature", 1.0});
      if (auto it = shape_free_tasks_.find(sig->shape_free_key); it != shape_free_tasks_.end())
        for (uint32_t task : it->second)
          if (std::find(exact.begin(), exact.end(), task) == exact.end())
            hits.push_back({0, task, "shape_free_signature", 1.0});
    }
  }
  std::sort(hits.begin(), hits.end(), [](const ContaminationHit& a, const ContaminationHit& b) {
    return a.task != b.task ? a.task < b.task : a.reason < b.reason;
  });
  return hits;
}

std::vector<ContaminationHit> Decontaminate(const std::vector<DecontamItem>& items,
                                            const SuiteIndex& index, int threads) {
  std::vector<std::vector<ContaminationHit>> per_item(items.size());
  ParallelFor(items.size(), threads, [&](size_t i) {
    per_item[i] = index.Check(items[i]);
    for (auto& h : per_item[i]) h.item = i;
  });
  std::vector<ContaminationHit> all;
  for (auto& v : per_item) all.insert(all.end(), v.begin(), v.end());
  return all;
}

}  // namespace kvault::corpus
