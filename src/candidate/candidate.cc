#include "candidate/candidate.h"

#include <algorithm>
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

namespace {

// Language of an extension-format source by file extension; "" if not one.
std::string ExtensionLanguage(const std::string& ext) {
  if (ext == ".cpp" || ext == ".cc" || ext == ".cxx") return "cpp";
  if (ext == ".cu") return "cuda";
  if (ext == ".hip") return "hip";
  return "";
}

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

Result<std::vector<CandidateMatch>> MatchCandidates(const std::string& dir,
                                                    const std::vector<std::string>& task_names,
                                                    std::vector<std::string>* unmatched) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Error{"candidates " + dir + " is not a folder"};
  std::set<std::string> tasks(task_names.begin(), task_names.end());
  std::vector<CandidateMatch> out;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file()) continue;
    const fs::path& p = entry.path();
    if (!IsCandidateExtension(p.extension().string())) continue;
    const std::string file = p.filename().string();
    const std::string stem = file.substr(0, file.find('.'));
    if (tasks.count(stem))
      out.push_back({stem, fs::absolute(p).string()});
    else if (unmatched)
      unmatched->push_back(p.string());
  }
  if (ec) return Error{"cannot list " + dir + ": " + ec.message()};
  std::sort(out.begin(), out.end(),
            [](const CandidateMatch& a, const CandidateMatch& b) { return NaturalLess(a.path, b.path); });
  return out;
}

}  // namespace kvault
