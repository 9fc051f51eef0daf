#include "toolchain/fast_ext.h"

#include "kvault/build_config.h"
#include "cache/cache.h"
#include "toolchain/build_key.h"
#include "toolchain/prepared_entry.h"
#include "util/env.h"
#include "util/files.h"

namespace kvault {
namespace {

constexpr char kHeaderName[] = "kvault_ext_pch.h";
constexpr char kGchName[] = "kvault_ext_pch.h.gch";
constexpr char kBindingName[] = "kvault_ext_binding.o";
constexpr char kHeaderText[] = "#include <torch/extension.h>\n";

std::string BindingSource(const std::string& include_ext_dir) {
  return include_ext_dir + "/kvault_ext/binding.cc";
}

FastExtEntry EntryAt(const CacheEntry& e) { return {e.Path(kHeaderName), e.Path(kBindingName)}; }

}  // namespace

bool FastExtRequested() { return GetEnv("KVAULT_FAST_EXT").value_or("0") == "1"; }

std::string DefaultIncludeExtDir() {
  if (auto root = GetEnv("KVAULT_SOURCE_ROOT"); root && !root->empty()) return *root + "/include_ext";
  return std::string(KVAULT_DEFAULT_SOURCE_ROOT) + "/include_ext";
}

Result<KeyHasher> FastExtKey(const BuildRequest& req, const CompilerSetup& setup,
                             const std::string& compiler_identity, const std::string& include_ext_dir) {
  auto pch = AssemblePchCommand(req, setup, "<header>", "<output>", "<include_ext>");
  if (!pch) return Error{pch.error()};
  auto binding = AssembleBindingCommand(req, setup, "<binding.cc>", "<output>");
  if (!binding) return Error{binding.error()};
  auto digest = DirectoryDigest(include_ext_dir);
  if (!digest) return Error{"fast extension headers: " + digest.error()};
  KeyHasher h;
  h.Add("kvault-fast-ext", "1");
  h.Add("header", kHeaderText);
  h.Add("include_ext", *digest);
  h.Add("pch_command", ShellQuote(pch->argv));
  h.Add("binding_command", ShellQuote(binding->argv));
  AddToolchainKeyFields(h, compiler_identity, setup.tool_path, req.torch);
  return h;
}

Result<FastExtEntry> EnsureFastExt(const BuildRequest& req, const CompilerSetup& setup,
                                   const std::string& compiler_identity, const std::string& include_ext_dir,
                                   const std::string& cache_root, std::chrono::milliseconds timeout) {
  auto key = FastExtKey(req, setup, compiler_identity, include_ext_dir);
  if (!key) return Error{key.error()};
  PreparedEntry spec;
  spec.what = "the fast extension build";
  spec.key = std::move(*key);
  spec.announce = "g++: a light precompiled header of about 320 MB and the binding, about a minute";
  spec.outputs = {kGchName, kBindingName};
  spec.inputs = {{kHeaderName, kHeaderText}};
  spec.commands = [&](const std::string& staged) -> Result<std::vector<CompileCommand>> {
    auto pch = AssemblePchCommand(req, setup, staged + "/" + kHeaderName, staged + "/" + kGchName, include_ext_dir);
    if (!pch) return Error{pch.error()};
    auto binding = AssembleBindingCommand(req, setup, BindingSource(include_ext_dir), staged + "/" + kBindingName);
    if (!binding) return Error{binding.error()};
    return std::vector<CompileCommand>{*pch, *binding};
  };
  auto entry = EnsurePreparedEntry(spec, cache_root, timeout);
  if (!entry) return Error{entry.error()};
  return EntryAt(*entry);
}

}  // namespace kvault
