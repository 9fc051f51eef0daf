#include "geak/geak_import.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "util/files.h"
#include "util/json.h"

namespace kvault {
namespace fs = std::filesystem;

std::string_view ToString(GeakFormat f) {
  return f == GeakFormat::kTritonBenchG ? "tritonbench-g" : "rocmbench";
}

std::optional<GeakFormat> GeakFormatFromString(std::string_view s) {
  if (s == "tritonbench-g") return GeakFormat::kTritonBenchG;
  if (s == "rocmbench") return GeakFormat::kRocmBench;
  return std::nullopt;
}

namespace {

bool IsSeparator(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line.size() == kGeakSeparatorWidth &&
         std::all_of(line.begin(), line.end(), [](char c) { return c == '#'; });
}

bool IsBlank(std::string_view s) { return s.find_first_not_of(" \t\r\n") == std::string_view::npos; }

// Position of the separator line and of the line after it, if there is one.
std::optional<std::pair<size_t, size_t>> FindSeparator(std::string_view text) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    const size_t stop = end == std::string_view::npos ? text.size() : end;
    if (IsSeparator(text.substr(start, stop - start)))
      return std::make_pair(start, end == std::string_view::npos ? text.size() : end + 1);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return std::nullopt;
}

// A Python string literal for any text: JSON's escapes are all valid in Python, and
// ensure_ascii keeps the literal in ASCII (invalid UTF-8 becomes U+FFFD).
std::string PythonLiteral(std::string_view text) {
  return Json(std::string(text)).dump(-1, ' ', true, Json::error_handler_t::replace);
}

struct FormatFacts {
  const char* tolerance;  // the benchmark's own allclose tolerances
  const char* label;
};

FormatFacts Facts(GeakFormat f) {
  if (f == GeakFormat::kTritonBenchG) return {"1e-3", "TritonBench-G"};
  return {"1e-2", "ROCmBench"};
}

}  // namespace

Result<GeakParts> SplitGeakFile(std::string_view text) {
  auto sep = FindSeparator(text);
  if (!sep) return Error{"no line of exactly 146 '#' separates the implementation from the tests"};
  GeakParts parts{std::string(text.substr(0, sep->first)), std::string(text.substr(sep->second))};
  if (IsBlank(parts.implementation)) return Error{"the implementation above the separator is empty"};
  if (IsBlank(parts.tests)) return Error{"the test code below the separator is empty"};
  return parts;
}

Result<std::string> CandidateImplementation(std::string_view text) {
  auto sep = FindSeparator(text);
  std::string impl(sep ? text.substr(0, sep->first) : text);
  if (IsBlank(impl)) return Error{"the candidate's implementation is empty"};
  return impl;
}

std::string MakeGeakTask(GeakFormat format, std::string_view source_name, const GeakParts& task) {
  const FormatFacts facts = Facts(format);
  std::string out;
  out += "\"\"\"Imported by `kvault import-geak --format " + std::string(ToString(format)) +
         "` from " + std::string(source_name) + " (" + facts.label +
         ").\n\nThe reference is the file's implementation; its trusted tests (below the line of\n"
         "146 '#') run on it in Model.forward, and on a candidate through module_fn\n"
         "(docs/geak-formats.md). Regenerate rather than edit.\"\"\"\n";
  out += "import torch.nn as nn\n\nfrom kvault_worker import geak\n\n";
  out += "FORMAT = \"" + std::string(ToString(format)) + "\"\n";
  out += "IMPLEMENTATION = " + PythonLiteral(task.implementation) + "\n";
  out += "TESTS = " + PythonLiteral(task.tests) + "\n";
  out += "KVAULT_META = {\"rtol\": " + std::string(facts.tolerance) + ", \"atol\": " +
         facts.tolerance + ", \"nan_policy\": \"forbid\"}\n\n\n";
  out += "def module_fn():\n    return geak.run_reference(FORMAT, IMPLEMENTATION, TESTS)\n\n\n";
  out += "class Model(nn.Module):\n    def forward(self, fn=module_fn):\n        return fn()\n\n\n";
  out += "def get_inputs():\n    return []\n\n\n";
  out += "def get_init_inputs():\n    return []\n";
  return out;
}

std::string MakeGeakCandidate(GeakFormat format, std::string_view implementation,
                              const GeakParts& task) {
  std::string out(implementation);
  if (!out.empty() && out.back() != '\n') out += '\n';
  out += "\n\n# Added by `kvault import-geak`: the task's trusted tests, run on the implementation\n"
         "# above (docs/geak-formats.md).\n";
  out += "from kvault_worker import geak as _kvault_geak  # noqa: E402\n\n";
  out += "_KVAULT_TESTS = " + PythonLiteral(task.tests) + "\n\n\n";
  out += "def module_fn():\n    return _kvault_geak.run_candidate(\"" + std::string(ToString(format)) +
         "\", globals(), _KVAULT_TESTS)\n";
  return out;
}

namespace {

std::vector<fs::path> PythonFiles(const std::string& dir, std::error_code& ec) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && e.path().extension() == ".py" && name[0] != '_')
      files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

Result<GeakImportSummary> ImportGeak(GeakFormat format, const std::string& tasks_dir,
                                     const std::string& candidates_dir,
                                     const std::string& out_dir) {
  std::error_code ec;
  if (!fs::is_directory(tasks_dir, ec)) return Error{"tasks " + tasks_dir + " is not a folder"};
  if (!candidates_dir.empty() && !fs::is_directory(candidates_dir, ec))
    return Error{"candidates " + candidates_dir + " is not a folder"};
  fs::create_directories(out_dir + "/suite", ec);
  if (!candidates_dir.empty()) fs::create_directories(out_dir + "/candidates", ec);
  if (ec) return Error{"cannot create folders under " + out_dir + ": " + ec.message()};

  GeakImportSummary summary;
  std::map<std::string, GeakParts> tasks;  // by stem
  auto task_files = PythonFiles(tasks_dir, ec);
  if (ec) return Error{"cannot list " + tasks_dir + ": " + ec.message()};
  for (const fs::path& p : task_files) {
    auto text = ReadFile(p.string());
    if (!text) return Error{"cannot read " + p.string() + ": " + text.error()};
    auto parts = SplitGeakFile(*text);
    if (!parts) {
      summary.problems.push_back(p.string() + ": " + parts.error());
      continue;
    }
    const std::string out = out_dir + "/suite/" + p.filename().string();
    if (auto s = WriteFileAtomic(out, MakeGeakTask(format, p.filename().string(), *parts)); !s)
      return Error{"cannot write " + out + ": " + s.error()};
    summary.tasks_written.push_back(out);
    tasks[p.stem().string()] = std::move(*parts);
  }
  if (candidates_dir.empty()) return summary;
  auto candidate_files = PythonFiles(candidates_dir, ec);
  if (ec) return Error{"cannot list " + candidates_dir + ": " + ec.message()};
  for (const fs::path& p : candidate_files) {
    const std::string file = p.filename().string();
    auto task = tasks.find(file.substr(0, file.find('.')));
    if (task == tasks.end()) {
      summary.problems.push_back(p.string() + ": no imported task named " + file.substr(0, file.find('.')));
      continue;
    }
    auto text = ReadFile(p.string());
    if (!text) return Error{"cannot read " + p.string() + ": " + text.error()};
    auto impl = CandidateImplementation(*text);
    if (!impl) {
      summary.problems.push_back(p.string() + ": " + impl.error());
      continue;
    }
    const std::string out = out_dir + "/candidates/" + file;
    if (auto s = WriteFileAtomic(out, MakeGeakCandidate(format, *impl, task->second)); !s)
      return Error{"cannot write " + out + ": " + s.error()};
    summary.candidates_written.push_back(out);
  }
  return summary;
}

}  // namespace kvault
