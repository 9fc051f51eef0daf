#pragma once
// The split of an export by task family (docs/corpus.md, "Split by task family").
//
//   auto split = TaskSplit::Build(vault, 0.1);
//   if (split->InTest(record.task.name)) ...  // the record's whole family is in `test`
//
// A family is the tasks linked by a shared name, a shared reference (its SHA-256) or a
// shared shape-free operation signature of their references (op_signature.h), over
// every task of the vault whatever an export's filter says. A task resized (batch size,
// dimensions, constants) or renamed is in its original's family, so the variants of a
// task never fall on both sides. A family's key is its smallest shape-free signature, or,
// without one, its smallest task name; the family is in the test split when the first
// 8 bytes of the SHA-256 of its key, as a fraction of 2^64, are below the test share.
// So the split is deterministic, and a family keeps its side as the vault grows unless
// a new task links it to another family.
//
// Thread safety: immutable after Build.
#include <cstddef>
#include <string>
#include <unordered_map>

#include "corpus/corpus_store.h"
#include "util/result.h"

namespace kvault::corpus {

class TaskSplit {
 public:
  // Reads every task of the vault (CorpusStore::ForEachTask) and computes each
  // reference's shape-free signature once.
  static Result<TaskSplit> Build(CorpusStore& vault, double test_share);

  // The key of the task's family; a name the vault did not hold is a family of its own.
  std::string FamilyOf(const std::string& task_name) const;
  bool InTest(const std::string& task_name) const;
  size_t families() const { return families_; }

 private:
  std::unordered_map<std::string, std::string> family_;  // task name -> family key
  double test_share_ = 0;
  size_t families_ = 0;
};

// Whether a family key is in the test split: the first 8 bytes of its SHA-256, as a
// fraction of 2^64, below `test_share`.
bool KeyInTestShare(const std::string& key, double test_share);

}  // namespace kvault::corpus
