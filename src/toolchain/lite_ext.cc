#include "toolchain/lite_ext.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>

#include "toolchain/build_key.h"
#include "toolchain/prepared_entry.h"
#include "toolchain/tools.h"
#include "util/env.h"
#include "util/env_vars.h"
#include "util/files.h"
#include "util/strings.h"

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

}  // namespace kvault
