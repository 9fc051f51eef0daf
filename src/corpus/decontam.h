#pragma once
// Decontamination against a benchmark suite (docs/corpus.md, "Decontamination").
//
//   auto suite = LoadBenchmarkSuite("KernelBench/level1");   // every source file under it
//   SuiteIndex index(*suite, DecontamOptions{});
//   std::vector<ContaminationHit> hits = index.Check(item);  // why item overlaps which task
//
// Two reasons, each with a score:
//   "ngram":     the share of a task's distinctive n-grams (of normalised tokens with
//                every own identifier erased; an n-gram found in more than
//                max_task_share of the suite's tasks is boilerplate and not counted)
//                that occur in the record's candidate or reference; hit when >= min_overlap.
//   "signature": the record's reference has the task's operation signature
//                (op_signature.h): the same ops and input shapes under renamed
//                variables and reordered lines; score 1.
//   "shape_free_signature": the same ops, inputs of the same ranks and init values of
//                the same form, sizes aside (a resized task); score 1. Not given
//                where "signature" is. N-grams erase numbers too.
// Thread safety: a SuiteIndex is immutable after construction; Check may be called
// from several threads.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "util/result.h"

namespace kvault::corpus {

struct BenchmarkTask {
  std::string name;    // path below the suite folder without extension, e.g. "level1/19_ReLU"
  std::string path;
  std::string source;
  std::string language;  // by extension: python | cuda | hip | cpp
};

// Every file under `folder` (recursively) with a source extension (.py .cu .cuh .hip
// .cpp .cc .c .h .hpp), sorted by name; hidden folders and __pycache__ skipped. Error
// when the folder cannot be read or holds no such file.
Result<std::vector<BenchmarkTask>> LoadBenchmarkSuite(const std::string& folder);

struct DecontamOptions {
  int ngram = 13;               // tokens per n-gram
  double min_overlap = 0.5;     // share of a task's distinctive n-grams for a hit
  double max_task_share = 0.05; // n-grams in more of the tasks than this are boilerplate
  bool signature = true;        // false: n-grams only
  int threads = 0;              // Decontaminate: 0, one per hardware thread
};

struct DecontamItem {
  std::string id;
  std::string candidate_source, language;
  std::string reference_source;  // a PyTorch task file, "" unknown
};

struct ContaminationHit {
  size_t item = 0;  // index into the items (Decontaminate) or 0 (Check)
  size_t task = 0;  // index into the suite's tasks
  std::string reason;  // "ngram" | "signature"
  double score = 0;
};

class SuiteIndex {
 public:
  SuiteIndex(const std::vector<BenchmarkTask>& tasks, const DecontamOptions& options);
  // The hits of one item, sorted by task, then reason.
  std::vector<ContaminationHit> Check(const DecontamItem& item) const;
  size_t distinctive_ngrams(size_t task) const { return task_ngrams_[task]; }
  bool has_signature(size_t task) const { return task_has_signature_[task]; }

 private:
  DecontamOptions options_;
  std::unordered_map<uint64_t, uint32_t> ngram_task_;  // distinctive n-gram -> its only task, or kShared
  std::vector<size_t> task_ngrams_;                    // distinctive n-grams per task
  std::vector<char> task_has_signature_;
  std::unordered_map<std::string, std::vector<uint32_t>> signature_tasks_;
  std::unordered_map<std::string, std::vector<uint32_t>> shape_free_tasks_;
};

// Every hit of every item, sorted by item then task.
std::vector<ContaminationHit> Decontaminate(const std::vector<DecontamItem>& items,
                                            const SuiteIndex& index, int threads);

// The n-gram hashes of a source (normalised, own identifiers erased), sorted, unique.
std::vector<uint64_t> SourceNgrams(const std::string& source, const std::string& language, int n);

}  // namespace kvault::corpus
