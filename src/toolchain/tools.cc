#include "toolchain/tools.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <mutex>

#include "util/env.h"
#include "util/env_vars.h"
#include "util/files.h"
#include "util/strings.h"
#include "util/subprocess.h"

namespace kvault {
namespace {

std::string FindInPath(const std::string& name) {
  auto path = GetEnv("PATH");
  if (!path) return "";
  for (const std::string& dir : Split(*path, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::vector<std::string> WellKnownLocations(Tool tool) {
  std::vector<std::string> out;
  auto under = [&](const char* var, const char* rel) {
    if (auto v = GetEnv(var); v && !v->empty()) out.push_back(*v + rel);
  };
  if (tool == Tool::kNvcc) {
    under("CUDA_HOME", "/bin/nvcc");
    under("CUDA_PATH", "/bin/nvcc");
    out.push_back("/usr/local/cuda/bin/nvcc");
  } else if (tool == Tool::kHipcc) {
    under("ROCM_PATH", "/bin/hipcc");
    out.push_back("/opt/rocm/bin/hipcc");
  }
  return out;
}

// Drops "Traceback (most recent call last):" blocks: the header, the indented frame
// lines after it, and the exception line that ends the block.
std::string WithoutTracebacks(const std::string& text) {
  std::string out;
  bool in_traceback = false;
  for (const std::string& line : Split(text, '\n')) {
    if (StartsWith(line, "Traceback (most recent call last)")) {
      in_traceback = true;
      continue;
    }
    if (in_traceback) {
      if (StartsWith(line, " ") || StartsWith(line, "\t")) continue;
      in_traceback = false;
      continue;
    }
    out += line;
    out += '\n';
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string VersionLine(Tool tool, const std::string& identity) {
  std::string first;
  for (const std::string& raw : Split(identity, '\n')) {
    std::string line(Trim(raw));
    if (line.empty()) continue;
    if (first.empty()) first = line;
    if (tool == Tool::kNvcc && line.find("release ") != std::string::npos) return line;
    if (tool == Tool::kHipcc && StartsWith(line, "HIP version")) return line;
  }
  return first;
}

// Which of `arches` a HIP compiler (hipcc or clang) accepts, by a syntax-only compile
// of an empty file.
std::vector<std::pair<std::string, bool>> ProbeOffloadArches(
    const std::string& compiler, const std::vector<std::string>& arches = {"gfx90a", "gfx940", "gfx942", "gfx950"}) {
  std::vector<std::pair<std::string, bool>> out;
  for (const std::string& arch : arches) {
    CommandSpec spec;
    spec.argv = {compiler, "--offload-arch=" + arch, "-x", "hip", "-nogpuinc",
                 "-nogpulib", "-fsyntax-only", "/dev/null"};
    auto r = RunCommand(spec, std::chrono::seconds(30), 64 * 1024);
    out.emplace_back(arch, r && !r->timed_out && r->exit_code == 0);
  }
  return out;
}

}  // namespace

std::string ToolName(Tool tool) {
  switch (tool) {
    case Tool::kCxx: return "g++";
    case Tool::kNvcc: return "nvcc";
    case Tool::kHipcc: return "hipcc";
  }
  return "?";
}

std::string ToolEnvVar(Tool tool) {
  switch (tool) {
    case Tool::kCxx: return "KVAULT_CXX";
    case Tool::kNvcc: return "KVAULT_NVCC";
    case Tool::kHipcc: return "KVAULT_HIPCC";
  }
  return "?";
}

namespace {

// The tool's variable (ToolEnvVar), read through the environment table.
std::optional<std::string> ToolFromEnv(Tool tool) {
  switch (tool) {
    case Tool::kCxx: return KvaultEnv("KVAULT_CXX");
    case Tool::kNvcc: return KvaultEnv("KVAULT_NVCC");
    case Tool::kHipcc: return KvaultEnv("KVAULT_HIPCC");
  }
  return std::nullopt;
}

}  // namespace

std::string ToolPath(Tool tool) {
  if (auto v = ToolFromEnv(tool); v && !v->empty()) return *v;
  if (std::string p = FindInPath(ToolName(tool)); !p.empty()) return p;
  for (const std::string& p : WellKnownLocations(tool))
    if (FileExists(p)) return p;
  return ToolName(tool);
}

Result<std::string> ToolIdentity(const std::string& path, std::chrono::milliseconds timeout) {
  static std::mutex mu;
  static std::map<std::string, std::string> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(path); it != cache.end()) return it->second;
  }
  CommandSpec spec;
  spec.argv = {path, "--version"};
  auto r = RunCommand(spec, timeout, 64 * 1024);
  if (!r) return Error{r.error()};
  if (r->timed_out) return Error{"'" + path + " --version' ran past " + FormatDuration(timeout)};
  if (r->exit_code != 0)
    return Error{"'" + path + " --version' " + DescribeTermination(r->exit_code, r->term_signal) +
                 ": " + std::string(Trim(Truncate(r->output, 400)))};
  std::string identity = WithoutTracebacks(r->output);
  std::lock_guard<std::mutex> lock(mu);
  cache[path] = identity;
  return identity;
}

std::string ShortVersion(Tool tool, const std::string& identity) {
  std::string line = VersionLine(tool, identity);
  if (tool == Tool::kNvcc) {
    size_t at = line.find("release ");
    if (at == std::string::npos) return "";
    std::string rest = line.substr(at + 8);
    return rest.substr(0, rest.find(','));
  }
  if (tool == Tool::kHipcc) {
    size_t colon = line.find(':');
    return colon == std::string::npos ? "" : std::string(Trim(line.substr(colon + 1)));
  }
  size_t space = line.rfind(' ');
  return space == std::string::npos ? line : line.substr(space + 1);
}

std::vector<ToolInfo> DiscoverTools() {
  std::vector<ToolInfo> tools;
  for (Tool tool : {Tool::kCxx, Tool::kNvcc, Tool::kHipcc}) {
    ToolInfo info;
    info.name = ToolName(tool);
    info.path = ToolPath(tool);
    auto identity = ToolIdentity(info.path);
    if (!identity) {
      info.note = identity.error() + " (set " + ToolEnvVar(tool) + " to choose another)";
      tools.push_back(std::move(info));
      continue;
    }
    info.found = true;
    info.version = VersionLine(tool, *identity);
    if (tool == Tool::kHipcc) {
      std::vector<std::string> unknown;
      for (const auto& [arch, ok] : ProbeOffloadArches(info.path))
        (ok ? info.offload_arches : unknown).push_back(arch);
      info.note = "knows " + (info.offload_arches.empty() ? "none" : Join(info.offload_arches, " ")) +
                  " of gfx90a gfx940 gfx942 gfx950";
      if (!unknown.empty())
        info.note += "; unknown: " + Join(unknown, " ") + " (no compile checks for those targets)";
    }
    tools.push_back(std::move(info));
  }
  return tools;
}

std::vector<ToolInfo> DiscoverOtherClangs(const std::string& lib_dir) {
  std::vector<std::pair<int, std::string>> found;  // LLVM major version, clang path
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(lib_dir, ec)) {
    const std::string name = e.path().filename().string();
    int major = 0;
    const std::string digits = StartsWith(name, "llvm-") ? name.substr(5) : "";
    auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), major);
    if (digits.empty() || err != std::errc() || end != digits.data() + digits.size()) continue;
    if (std::string clang = e.path().string() + "/bin/clang"; FileExists(clang)) found.emplace_back(major, clang);
  }
  std::sort(found.begin(), found.end());
  std::vector<ToolInfo> out;
  for (const auto& [major, clang] : found) {
    ToolInfo info;
    info.name = "clang (llvm-" + std::to_string(major) + ")";
    info.path = clang;
    auto identity = ToolIdentity(clang);
    info.found = identity.ok();
    if (identity) info.version = identity->substr(0, identity->find('\n'));
    std::vector<std::string> unknown;
    for (const auto& [arch, ok] : ProbeOffloadArches(clang, {"gfx942", "gfx950"}))
      (ok ? info.offload_arches : unknown).push_back(arch);
    info.note = "knows " + (info.offload_arches.empty() ? "neither" : Join(info.offload_arches, " ")) +
                " of gfx942 gfx950; no build uses it (docs/toolchains.md, \"gfx942 and gfx950\")";
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace kvault
