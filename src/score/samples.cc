#include "score/samples.h"

#include <algorithm>
#include <set>

#include "util/json.h"
#include "util/strings.h"

namespace kvault::score {

Result<CategoryMap> ParseCategories(const std::string& json_text) {
  Json j = Json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Error{"categories.json: expected an object {\"task\": \"category\", ...}"};
  CategoryMap out;
  for (const auto& [task, cat] : j.items()) {
    if (!cat.is_string()) return Error{"categories.json: the category of '" + task + "' is not a string"};
    out[task] = cat.get<std::string>();
  }
  return out;
}

std::string CategoryOf(const std::string& task, const CategoryMap& categories) {
  if (auto it = categories.find(task); it != categories.end()) return it->second;
  if (size_t slash = task.find('/'); slash != std::string::npos && slash > 0) return task.substr(0, slash);
  return "all";
}

bool NotKernelFault(const AttemptRecord& a) {
  if (a.status == "unsupported") return a.format != "kernelbench";
  return a.status == "task_error" || a.status == "infra_error";
}

SuiteSamples GroupByTask(const std::vector<AttemptRecord>& records,
                         const std::vector<std::string>& suite_tasks, const CategoryMap& categories) {
  SuiteSamples out;
  std::map<std::string, size_t> index;
  for (const std::string& t : suite_tasks) {
    if (index.count(t)) continue;
    index[t] = out.tasks.size();
    out.tasks.push_back(TaskSamples{t, CategoryOf(t, categories), {}, 0});
  }
  std::set<std::string> unknown;
  for (const AttemptRecord& r : records) {
    auto it = index.find(r.task);
    if (it == index.end()) {
      unknown.insert(r.task);
      continue;
    }
    TaskSamples& ts = out.tasks[it->second];
    ++out.statuses[r.status];
    if (NotKernelFault(r)) {
      ++ts.not_kernel_fault;
      continue;
    }
    Sample s;
    s.id = r.id;
    s.status = r.status;
    s.candidate = r.candidate_path;
    s.sample = r.sample;
    s.correct = r.status == "passed";
    s.ran = s.correct || r.status == "mismatch" || r.status == "policy_violation";
    s.speedup = r.speedup;
    s.reference_ms = r.reference_ms;
    s.candidate_ms = r.candidate_ms;
    ts.samples.push_back(std::move(s));
  }
  for (TaskSamples& ts : out.tasks)
    std::sort(ts.samples.begin(), ts.samples.end(), [](const Sample& a, const Sample& b) {
      if (a.sample != b.sample) return NaturalLess(a.sample, b.sample);
      return a.id < b.id;
    });
  out.unknown_tasks.assign(unknown.begin(), unknown.end());
  return out;
}

namespace {

// The label of a record named by kvault serve, `<label>-<hash12>` with hash12 the
// record's own task_hash prefix; nullopt for any other name.
std::optional<std::string> ServeLabel(const AttemptRecord& r) {
  constexpr size_t kHashDigits = 12;
  const std::string& name = r.task;
  if (name.size() < kHashDigits + 2 || r.task_hash.size() < kHashDigits) return std::nullopt;
  const size_t dash = name.size() - kHashDigits - 1;
  if (name[dash] != '-' || name.compare(dash + 1, kHashDigits, r.task_hash, 0, kHashDigits) != 0)
    return std::nullopt;
  return name.substr(0, dash);
}

std::string LastPart(const std::string& name) {
  size_t slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

}  // namespace

void NameServeTasks(std::vector<AttemptRecord>& records, const std::vector<SuiteTask>& suite) {
  if (suite.empty()) {
    std::map<std::string, std::set<std::string>> contents;  // label -> task hashes
    for (const AttemptRecord& r : records)
      if (auto label = ServeLabel(r)) contents[*label].insert(r.task_hash);
    for (AttemptRecord& r : records)
      if (auto label = ServeLabel(r); label && contents[*label].size() == 1) r.task = *label;
    return;
  }
  std::map<std::string, std::string> by_prefix, by_label;  // hash12 / label -> suite name
  std::set<std::string> ambiguous;                          // labels two suite tasks share
  for (const SuiteTask& t : suite) {
    by_prefix.emplace(t.hash.substr(0, 12), t.name);
    for (const std::string& label : {t.name, LastPart(t.name)}) {
      auto [it, added] = by_label.emplace(label, t.name);
      if (!added && it->second != t.name) ambiguous.insert(label);
    }
  }
  for (AttemptRecord& r : records) {
    auto label = ServeLabel(r);
    if (!label) continue;
    if (auto it = by_prefix.find(r.task_hash.substr(0, 12)); it != by_prefix.end()) r.task = it->second;
    else if (auto named = by_label.find(*label); named != by_label.end() && !ambiguous.count(*label))
      r.task = named->second;
  }
}

std::vector<std::string> TasksOf(const std::vector<AttemptRecord>& records) {
  std::set<std::string> names;
  for (const AttemptRecord& r : records) names.insert(r.task);
  return {names.begin(), names.end()};
}

}  // namespace kvault::score
