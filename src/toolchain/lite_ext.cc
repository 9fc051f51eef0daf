#include "toolchain/lite_ext.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>
#include <set>

#include "toolchain/build_key.h"
#include "toolchain/lite_diagnostics.h"
#include "toolchain/prepared_entry.h"
#include "toolchain/tools.h"
#include "util/env.h"
#include "util/env_vars.h"
#include "util/files.h"
#include "util/strings.h"
#include "util/subprocess.h"

namespace kvault {
namespace {

constexpr char kObjectName[] = "kvault_lite.o";

// Headers of PyTorch's and pybind11's: an #include of one the lite folder lacks means
// the full build.
const char* const kTorchPrefixes[] = {"torch/", "ATen/", "c10/", "caffe2/", "pybind11/", "THC/", "TH/"};
// PyTorch's own headers the lite headers may stand beside (api.h includes them too).
const char* const kTorchAllowed[] = {"c10/util/Half.h", "c10/util/BFloat16.h"};

std::string LiteSource(const std::string& include_lite_dir) { return include_lite_dir + "/kvault_lite/lite.cc"; }

// nvcc's own headers: <nvcc's folder>/../include.
std::string CudaIncludeDir(const std::string& nvcc_path) {
  std::error_code ec;
  auto real = std::filesystem::canonical(nvcc_path, ec);
  std::filesystem::path p = ec ? std::filesystem::path(nvcc_path) : real;
  return (p.parent_path().parent_path() / "include").string();
}

// The full build's preprocessed source is about 15 MB (PyTorch 1.13's extension.h).
constexpr uint64_t kMaxPreprocessed = 256ull << 20;

// Which of `names` the full build's headers hold: the source preprocessed with the
// full build's command (-E -dD instead of -c), searched outside the source's lines.
Result<std::vector<std::string>> NamesInFullHeaders(const BuildRequest& req, const CompilerSetup& setup,
                                                    const std::vector<std::string>& names,
                                                    std::chrono::milliseconds timeout) {
  auto scratch = TempDir::Create("", "kvault-preprocess");
  if (!scratch) return Error{scratch.error()};
  BuildRequest pre = req;
  pre.compile_only = true;
  const std::string out = scratch->Join("unit.i");
  auto cmd = AssembleCommand(pre, setup, CommandSlots{req.source_path, "kv_preprocessed", out});
  if (!cmd) return Error{cmd.error()};
  std::vector<std::string>& argv = cmd->argv;
  auto c = std::find(argv.begin(), argv.end(), "-c");
  if (c == argv.end()) return Error{"internal: a compile-only command without -c"};
  *c = "-E";
  if (setup.tool == Tool::kNvcc) argv.insert(c + 1, {"-Xcompiler", "-dD"});
  else argv.insert(c + 1, "-dD");
  CommandSpec spec;
  spec.argv = argv;
  spec.cwd = scratch->path();
  if (req.confine) {
    auto confined = req.confine(argv, {scratch->path()});
    if (!confined) return Error{"the preprocessor's sandbox: " + confined.error()};
    spec.argv = std::move(*confined);
  }
  auto run = RunCommand(spec, timeout);
  if (!run) return Error{ToolName(setup.tool) + " could not be started: " + run.error()};
  if (run->timed_out) return Error{"ran past its limit"};
  if (run->exit_code != 0) return Error{"failed: " + Truncate(std::string(Trim(run->output)), 200)};
  auto text = ReadRegularFile(out, kMaxPreprocessed);
  if (!text) return Error{text.error()};
  return NamesOutsideSource(*text, req.source_path, names);
}

// The macros the lite headers define (#define NAME), read from their folder.
std::set<std::string> LiteMacros(const std::string& include_lite_dir) {
  static const std::regex define(R"(^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*))");
  std::set<std::string> names;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(include_lite_dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    auto text = ReadFile(it->path().string());
    if (!text) continue;
    for (const std::string& line : Split(*text, '\n'))
      if (std::smatch m; std::regex_search(line, m, define)) names.insert(m[1]);
  }
  return names;
}

}  // namespace

bool LiteExtEnabled() { return KvaultEnv("KVAULT_LITE_EXT").value_or("1") != "0"; }

std::string DefaultIncludeLiteDir() {
  return SourceRoot() + "/include_lite";
}

std::string LiteExtExcluded(const BuildRequest& req, const CompilerSetup& setup, const std::string& source,
                            const std::string& include_lite_dir) {
  if (req.kind != SourceKind::kTorchExtension) return "native sources have no binding";
  if (setup.tool == Tool::kHipcc || req.language == Language::kHip)
    return "the lite extension build is for g++ and nvcc on C++ and CUDA sources";
  static const std::regex include_line(R"(^[ \t]*#[ \t]*include[ \t]*([<"])([^>"]*)[>"])");
  for (const std::string& line : Split(source, '\n')) {
    // Past what std::regex can match (util/strings.h): the full build reads such a source.
    if (line.size() > kMostRegexChars)
      return "the source has a line longer than " + std::to_string(kMostRegexChars) + " characters";
    std::smatch m;
    if (!std::regex_search(line, m, include_line)) continue;
    const std::string path = m[2];
    if (m[1] == "\"") return "the source includes local files";
    const bool torch = path == "Python.h" || std::any_of(std::begin(kTorchPrefixes), std::end(kTorchPrefixes),
                                                         [&](const char* p) { return StartsWith(path, p); });
    if (!torch) continue;
    if (std::find(std::begin(kTorchAllowed), std::end(kTorchAllowed), path) != std::end(kTorchAllowed)) continue;
    if (!FileExists(include_lite_dir + "/" + path)) return "the lite headers have no <" + path + ">";
  }
  return "";
}

std::vector<std::string> LiteExtDefines(const std::string& source) {
  std::string lower(source.size(), ' ');
  std::transform(source.begin(), source.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower.find("half") != std::string::npos || lower.find("bfloat") != std::string::npos)
    return {"-DKVAULT_LITE_HALF=1"};
  return {};
}

Result<KeyHasher> LiteExtKey(const BuildRequest& req, const CompilerSetup& setup,
                             const std::string& compiler_identity, const std::string& include_lite_dir) {
  const std::string cxx = ToolPath(Tool::kCxx);
  auto cxx_identity = setup.tool == Tool::kCxx ? Result<std::string>(compiler_identity) : ToolIdentity(cxx);
  if (!cxx_identity) return Error{"g++ is not usable for the lite extension build: " + cxx_identity.error()};
  auto object = AssembleLiteObjectCommand(req, cxx, CudaIncludeDir(setup.tool_path), "<lite.cc>", "<output>");
  if (!object) return Error{object.error()};
  auto digest = DirectoryDigest(include_lite_dir);
  if (!digest) return Error{"lite extension headers: " + digest.error()};
  KeyHasher h;
  h.Add("kvault-lite-ext", "1");
  h.Add("include_lite", *digest);
  h.Add("object_command", ShellQuote(object->argv));
  h.Add("cxx", *cxx_identity);
  AddToolchainKeyFields(h, compiler_identity, setup.tool_path, req.torch);
  return h;
}

Result<std::string> EnsureLiteExt(const BuildRequest& req, const CompilerSetup& setup,
                                  const std::string& compiler_identity, const std::string& include_lite_dir,
                                  const std::string& cache_root, std::chrono::milliseconds timeout) {
  auto key = LiteExtKey(req, setup, compiler_identity, include_lite_dir);
  if (!key) return Error{key.error()};
  PreparedEntry spec;
  spec.what = "the lite extension build";
  spec.key = std::move(*key);
  spec.announce = "one object of PyTorch calls, about 20 s";
  spec.outputs = {kObjectName};
  spec.commands = [&](const std::string& staged) -> Result<std::vector<CompileCommand>> {
    auto object = AssembleLiteObjectCommand(req, ToolPath(Tool::kCxx), CudaIncludeDir(setup.tool_path),
                                            LiteSource(include_lite_dir), staged + "/" + kObjectName);
    if (!object) return Error{object.error()};
    return std::vector<CompileCommand>{*object};
  };
  auto entry = EnsurePreparedEntry(spec, cache_root, timeout);
  if (!entry) return Error{entry.error()};
  return entry->Path(kObjectName);
}

LiteCompileJudgement JudgeLiteCompileError(const BuildRequest& req, const CompilerSetup& setup,
                                           const std::string& source, const std::string& diagnostics,
                                           const std::string& include_lite_dir, std::chrono::milliseconds timeout) {
  LiteFailureJudgement j = JudgeLiteFailure(diagnostics, req.source_path, source, include_lite_dir);
  if (!j.own) return {false, j.why};
  std::vector<std::string> names = j.undeclared;
  names.insert(names.end(), j.macro_like.begin(), j.macro_like.end());
  if (names.empty()) return {true, j.why};
  auto found = NamesInFullHeaders(req, setup, names, timeout);
  if (!found) return {false, "the full build's preprocessor " + found.error()};
  // A macro beside a syntax error that the lite headers define too is no name they lack.
  const std::set<std::string> lite_macros = j.macro_like.empty() ? std::set<std::string>() : LiteMacros(include_lite_dir);
  for (const std::string& name : *found) {
    const bool undeclared = std::find(j.undeclared.begin(), j.undeclared.end(), name) != j.undeclared.end();
    if (undeclared || !lite_macros.contains(name)) return {false, "PyTorch's headers hold '" + name + "'"};
  }
  return {true, j.why};
}

}  // namespace kvault
