#include "task/task_file.h"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>

#include "util/files.h"
#include "util/sha256.h"
#include "util/strings.h"

namespace kvault {
namespace fs = std::filesystem;

Result<TaskFile> LoadTaskFile(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  if (ec) return Error{"cannot resolve task path " + path + ": " + ec.message()};
  if (p.extension() != ".py") return Error{"task " + path + " is not a .py file"};
  auto source = ReadFile(p.string());
  if (!source) return Error{"cannot read task " + path + ": " + source.error()};
  TaskFile t;
  t.name = p.stem().string();
  t.path = p.string();
  t.source = std::move(*source);
  t.hash = Sha256Hex(t.source);
  return t;
}

namespace {

bool Hidden(const fs::path& p) {
  const std::string name = p.filename().string();
  return name.starts_with("_") || name.starts_with(".");
}

// The task files directly in `dir`, sorted by name (numbers as numbers).
Result<std::vector<fs::path>> TaskPathsIn(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const fs::path& p = entry.path();
    if (entry.is_regular_file() && p.extension() == ".py" && !Hidden(p)) paths.push_back(p);
  }
  if (ec) return Error{"cannot list suite " + dir.string() + ": " + ec.message()};
  std::sort(paths.begin(), paths.end(),
            [](const fs::path& a, const fs::path& b) { return NaturalLess(a.string(), b.string()); });
  return paths;
}

}  // namespace

Result<std::vector<TaskFile>> DiscoverSuite(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Error{"suite " + dir + " is not a folder"};
  auto top = TaskPathsIn(dir);
  if (!top) return Error{top.error()};
  std::vector<std::pair<std::string, fs::path>> named;  // task name, file
  for (const fs::path& p : *top) named.emplace_back(p.stem().string(), p);
  if (named.empty()) {  // KernelBench's layout: level1/, level2/, ... hold the tasks
    std::vector<fs::path> folders;
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.is_directory() && !Hidden(entry.path())) folders.push_back(entry.path());
    if (ec) return Error{"cannot list suite " + dir + ": " + ec.message()};
    std::sort(folders.begin(), folders.end(),
              [](const fs::path& a, const fs::path& b) { return NaturalLess(a.string(), b.string()); });
    for (const fs::path& f : folders) {
      auto inner = TaskPathsIn(f);
      if (!inner) return Error{inner.error()};
      for (const fs::path& p : *inner)
        named.emplace_back(f.filename().string() + "/" + p.stem().string(), p);
    }
  }
  std::vector<TaskFile> tasks;
  for (const auto& [name, p] : named) {
    auto t = LoadTaskFile(p.string());
    if (!t) return Error{t.error()};
    t->name = name;
    tasks.push_back(std::move(*t));
  }
  if (tasks.empty())
    return Error{"suite " + dir + " holds no task (*.py, here or in its sub-folders such as level1/)"};
  return tasks;
}

Result<std::vector<TaskFile>> FilterTasks(const std::vector<TaskFile>& suite,
                                          const std::vector<std::string>& patterns) {
  if (patterns.empty()) return suite;
  std::vector<bool> used(patterns.size(), false);
  std::vector<TaskFile> out;
  for (const TaskFile& t : suite) {
    bool keep = false;
    for (size_t i = 0; i < patterns.size(); ++i)
      if (fnmatch(patterns[i].c_str(), t.name.c_str(), 0) == 0) keep = used[i] = true;
    if (keep) out.push_back(t);
  }
  for (size_t i = 0; i < patterns.size(); ++i)
    if (!used[i]) return Error{"--tasks " + patterns[i] + " matches no task of the suite"};
  return out;
}

std::vector<int> TaskInfo::CorrectnessCases() const {
  std::vector<int> out;
  for (size_t i = 0; i < cases.size(); ++i)
    if (cases[i].correctness) out.push_back(static_cast<int>(i));
  return out;
}

std::vector<int> TaskInfo::PerformanceCases() const {
  std::vector<int> out;
  for (size_t i = 0; i < cases.size(); ++i)
    if (cases[i].performance) out.push_back(static_cast<int>(i));
  return out;
}

Result<TaskInfo> TaskInfoFromDescribe(const TaskFile& file, const Json& task) {
  if (!task.is_object() || !task.contains("cases") || !task["cases"].is_array())
    return Error{"describe answer for " + file.name + " lacks a cases list"};
  // A float converted to int64_t is undefined behaviour when out of range.
  if (task.contains("num_parameters") && !task["num_parameters"].is_number_integer())
    return Error{"describe answer for " + file.name + " is malformed: num_parameters is not an integer"};
  TaskInfo info;
  info.file = file;
  try {
    info.has_twin = task.value("has_twin", false);
    info.num_parameters = task.value("num_parameters", int64_t{0});
    for (const Json& c : task["cases"]) {
      CaseInfo ci;
      ci.name = c.at("name").get<std::string>();
      ci.correctness = c.value("correctness", true);
      ci.performance = c.value("performance", true);
      if (c.contains("input_bytes") && c["input_bytes"].is_number_integer())
        ci.input_bytes = std::max<int64_t>(0, c["input_bytes"].get<int64_t>());
      info.cases.push_back(std::move(ci));
    }
    if (task.contains("meta") && task["meta"].is_object()) {
      const Json& m = task["meta"];
      if (m.contains("rtol") && m["rtol"].is_number()) info.rtol = m["rtol"].get<double>();
      if (m.contains("atol") && m["atol"].is_number()) info.atol = m["atol"].get<double>();
      if (m.contains("nan_policy") && m["nan_policy"].is_string())
        info.nan_policy = m["nan_policy"].get<std::string>();
      if (m.contains("seeds") && m["seeds"].is_number_integer())
        info.seeds = std::max(3, m["seeds"].get<int>());
      if (m.contains("policy") && m["policy"].is_string()) info.policy = m["policy"].get<std::string>();
      if (m.contains("input_distributions") && m["input_distributions"].is_array()) {
        info.input_distributions.clear();
        for (const Json& d : m["input_distributions"])
          if (d.is_string()) info.input_distributions.push_back(d.get<std::string>());
      }
      if (m.contains("plausible_speedup") && m["plausible_speedup"].is_number())
        info.plausible_speedup = m["plausible_speedup"].get<double>();
    }
    if (task.contains("held_out") && task["held_out"].is_array()) info.held_out = task["held_out"];
  } catch (const Json::exception& e) {
    return Error{"describe answer for " + file.name + " is malformed: " + e.what()};
  }
  if (info.cases.empty()) return Error{"task " + file.name + " has no input case"};
  if (info.CorrectnessCases().empty())
    return Error{"task " + file.name + " has no correctness case"};
  return info;
}

}  // namespace kvault
