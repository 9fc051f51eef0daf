#include "candidate/candidate.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <filesystem>
#include <set>

#include "util/files.h"
#include "util/sha256.h"
#include "util/strings.h"

namespace kvault {
namespace fs = std::filesystem;

std::string_view ToString(CandidateFormat f) {
  switch (f) {
    case CandidateFormat::kExtension: return "extension";
    case CandidateFormat::kKernelBench: return "kernelbench";
    case CandidateFormat::kNative: return "native";
    case CandidateFormat::kTriton: return "triton";
  }
  return "unknown";
}

std::string ExtensionLanguage(const std::string& ext) {
  if (ext == ".cpp" || ext == ".cc" || ext == ".cxx") return "cpp";
  if (ext == ".cu") return "cuda";
  if (ext == ".hip") return "hip";
  return "";
}

namespace {

bool IsCandidateExtension(const std::string& ext) {
  return ext == ".py" || !ExtensionLanguage(ext).empty();
}

// A Triton candidate imports triton and decorates a kernel with @triton.jit.
bool IsTritonSource(const std::string& source) {
  const bool imports = source.find("import triton") != std::string::npos ||
                       source.find("from triton") != std::string::npos;
  return imports && source.find("@triton.jit") != std::string::npos;
}

bool DefinesTritonEntry(const std::string& source) {
  return source.find("class ModelNew") != std::string::npos ||
         source.find("def module_fn") != std::string::npos;
}

}  // namespace

Result<Candidate> LoadCandidate(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  if (ec) return Error{"cannot resolve candidate path " + path};
  auto source = ReadFile(p.string());
  if (!source) return Error{"cannot read candidate " + path + ": " + source.error()};
  return CandidateFromSource(p.string(), std::move(*source));
}

Result<Candidate> CandidateFromSource(const std::string& path, std::string source) {
  const fs::path p(path);
  Candidate c;
  c.path = path;
  c.source = std::move(source);
  c.hash = Sha256Hex(c.source);
  if (c.source.find_first_not_of(" \t\r\n") == std::string::npos)
    return Error{"candidate " + p.filename().string() + " is empty"};
  const std::string ext = p.extension().string();
  if (ext == ".py" && IsTritonSource(c.source)) {
    if (!DefinesTritonEntry(c.source))
      return Error{"Triton candidate " + p.filename().string() +
                   " defines neither class ModelNew nor def module_fn (its entry point)"};
    c.format = CandidateFormat::kTriton;
    c.language = "triton";
    return c;
  }
  if (ext == ".py") {
    if (c.source.find("class ModelNew") == std::string::npos)
      return Error{"Python candidate " + p.filename().string() +
                   " defines no class ModelNew (KernelBench format)"};
    c.format = CandidateFormat::kKernelBench;
    c.language = "python";
    return c;
  }
  c.language = ExtensionLanguage(ext);
  if (c.language.empty())
    return Error{"candidate " + p.filename().string() + ": unknown file type '" + ext +
                 "' (expected .cpp, .cu, .hip or .py)"};
  if (c.source.find("PYBIND11_MODULE") != std::string::npos) {
    c.format = CandidateFormat::kExtension;
    return c;
  }
  if (c.source.find("kvault_forward") != std::string::npos) {
    c.format = CandidateFormat::kNative;
    return c;
  }
  return Error{"candidate " + p.filename().string() +
               " is neither extension format (no PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) binding "
               "exposing forward) nor native format (no extern \"C\" kvault_forward)"};
}

std::optional<KernelBenchSampleName> ParseKernelBenchSampleName(const std::string& file) {
  // level_<L>_problem_<P>_sample_<S>_kernel.<ext>
  KernelBenchSampleName n;
  int consumed = 0;
  if (std::sscanf(file.c_str(), "level_%d_problem_%d_sample_%d_kernel.%n", &n.level, &n.problem,
                  &n.sample, &consumed) != 3 || consumed == 0)
    return std::nullopt;
  if (file.find('.', static_cast<size_t>(consumed)) != std::string::npos || consumed == static_cast<int>(file.size()))
    return std::nullopt;
  return n;
}

namespace {

// Task names of a suite of level folders by (level, problem): "level1/19_ReLU" is
// level 1, problem 19.
std::map<std::pair<int, int>, std::string> KernelBenchTasks(const std::vector<std::string>& names) {
  std::map<std::pair<int, int>, std::string> out;
  for (const std::string& name : names) {
    int level = 0, problem = 0, consumed = 0;
    if (std::sscanf(name.c_str(), "level%d/%d_%n", &level, &problem, &consumed) == 2 && consumed > 0)
      out.emplace(std::make_pair(level, problem), name);
  }
  return out;
}

}  // namespace

Result<std::vector<CandidateMatch>> MatchCandidates(const std::string& dir,
                                                    const std::vector<std::string>& task_names,
                                                    std::vector<std::string>* unmatched) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Error{"candidates " + dir + " is not a folder"};
  std::set<std::string> tasks(task_names.begin(), task_names.end());
  const auto by_problem = KernelBenchTasks(task_names);
  std::vector<CandidateMatch> out;
  auto skip = [&](const fs::path& p, const std::string& why) {
    if (unmatched) unmatched->push_back(p.string() + " (" + why + ")");
  };
  // `prefix`: "" in `dir`, "<folder>/" in a sub-folder (candidates laid out like a
  // suite of level folders).
  auto match = [&](const fs::path& p, const std::string& prefix) {
    const std::string file = p.filename().string();
    if (file.starts_with(".")) return;
    if (!IsCandidateExtension(p.extension().string()))
      return skip(p, "not a candidate file: expected .cpp, .cu, .hip or .py");
    if (auto kb = ParseKernelBenchSampleName(file); kb && prefix.empty()) {
      auto it = by_problem.find({kb->level, kb->problem});
      if (it == by_problem.end())
        return skip(p, "no task level" + std::to_string(kb->level) + "/" + std::to_string(kb->problem) +
                           "_* in the suite");
      out.push_back({it->second, fs::absolute(p).string()});
      return;
    }
    const std::string stem = prefix + file.substr(0, file.find('.'));
    if (!tasks.count(stem)) return skip(p, "no task named " + stem + " in the suite");
    out.push_back({stem, fs::absolute(p).string()});
  };
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file()) {
      match(entry.path(), "");
    } else if (entry.is_directory() && !entry.path().filename().string().starts_with(".")) {
      std::error_code sub_ec;
      for (const auto& inner : fs::directory_iterator(entry.path(), sub_ec))
        if (inner.is_regular_file()) match(inner.path(), entry.path().filename().string() + "/");
      if (sub_ec) return Error{"cannot list " + entry.path().string() + ": " + sub_ec.message()};
    }
  }
  if (ec) return Error{"cannot list " + dir + ": " + ec.message()};
  std::sort(out.begin(), out.end(),
            [](const CandidateMatch& a, const CandidateMatch& b) {
              if (a.task != b.task) return NaturalLess(a.task, b.task);
              return NaturalLess(a.path, b.path);
            });
  return out;
}

}  // namespace kvault
