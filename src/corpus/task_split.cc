#include "corpus/task_split.h"

#include <vector>

#include "corpus/op_signature.h"
#include "corpus/union_find.h"
#include "util/sha256.h"

namespace kvault::corpus {
namespace {

// The prefix of a family key made of a shape-free signature (a name's key is the name).
constexpr const char* kSignatureKey = "shape-free-signature:";

// Names, references and signatures, each a set of its own kind until linked.
class Links {
 public:
  enum Kind : char { kName = 'n', kReference = 'r', kSignature = 's' };
  size_t Node(Kind kind, const std::string& value) {
    auto [it, added] = index_.try_emplace(std::string(1, kind) + value, sets_.size());
    if (added) {
      sets_.Add();
      kinds_.push_back(kind);
      values_.push_back(value);
    }
    return it->second;
  }
  size_t Find(size_t n) { return sets_.Find(n); }
  void Join(size_t a, size_t b) { sets_.Unite(a, b); }
  size_t size() const { return sets_.size(); }
  Kind kind(size_t n) const { return kinds_[n]; }
  const std::string& value(size_t n) const { return values_[n]; }

 private:
  std::unordered_map<std::string, size_t> index_;
  UnionFind sets_;
  std::vector<Kind> kinds_;
  std::vector<std::string> values_;
};

}  // namespace

bool KeyInTestShare(const std::string& key, double test_share) {
  const std::string hex = Sha256Hex(key).substr(0, 16);
  const double fraction = static_cast<double>(std::stoull(hex, nullptr, 16)) / 18446744073709551616.0;
  return fraction < test_share;
}

Result<TaskSplit> TaskSplit::Build(CorpusStore& vault, double test_share) {
  Links links;
  std::unordered_map<std::string, std::string> signature_of;  // reference SHA-256 -> shape-free key
  const std::string no_reference = Sha256Hex("");
  Status s = vault.ForEachTask([&](const TaskRef& task) {
    const size_t name = links.Node(Links::kName, task.name);
    if (task.reference_sha256.empty() || task.reference_sha256 == no_reference) return;
    links.Join(name, links.Node(Links::kReference, task.reference_sha256));
    auto [it, added] = signature_of.try_emplace(task.reference_sha256);
    if (added && !task.reference_source.empty())
      if (auto sig = ReferenceSignature(task.reference_source)) it->second = sig->shape_free_key;
    if (!it->second.empty()) links.Join(name, links.Node(Links::kSignature, it->second));
  });
  if (!s) return Error{s.error()};
  // Each family's key: its smallest signature, else its smallest name.
  std::unordered_map<size_t, std::string> key;  // root -> key
  for (size_t n = 0; n < links.size(); ++n) {
    if (links.kind(n) == Links::kReference) continue;
    std::string candidate = links.kind(n) == Links::kSignature ? kSignatureKey + links.value(n) : links.value(n);
    auto [it, added] = key.try_emplace(links.Find(n), candidate);
    if (added) continue;
    const bool have_signature = it->second.starts_with(kSignatureKey);
    const bool is_signature = links.kind(n) == Links::kSignature;
    if (is_signature != have_signature ? is_signature : candidate < it->second) it->second = std::move(candidate);
  }
  TaskSplit split;
  split.test_share_ = test_share;
  split.families_ = key.size();
  for (size_t n = 0; n < links.size(); ++n)
    if (links.kind(n) == Links::kName) split.family_[links.value(n)] = key[links.Find(n)];
  return split;
}

std::string TaskSplit::FamilyOf(const std::string& task_name) const {
  auto it = family_.find(task_name);
  return it == family_.end() ? task_name : it->second;
}

bool TaskSplit::InTest(const std::string& task_name) const {
  return KeyInTestShare(FamilyOf(task_name), test_share_);
}

}  // namespace kvault::corpus
