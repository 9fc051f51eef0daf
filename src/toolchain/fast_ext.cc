#include "toolchain/fast_ext.h"

#include <unistd.h>

#include <cstdio>

#include "kvault/build_config.h"
#include "cache/cache.h"
#include "toolchain/build_key.h"
#include "util/env.h"
#include "util/files.h"
#include "util/json.h"
#include "util/strings.h"
#include "util/subprocess.h"

namespace kvault {
namespace {

constexpr size_t kMaxDiagnostics = 16 * 1024;
constexpr char kHeaderName[] = "kvault_ext_pch.h";
constexpr char kGchName[] = "kvault_ext_pch.h.gch";
constexpr char kBindingName[] = "kvault_ext_binding.o";
constexpr char kFailedName[] = "failed.json";
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
  const std::string hex = key->Hex();
  auto limits = CacheLimits::FromEnv();
  if (!limits) return Error{limits.error()};
  Cache cache(cache_root, "pch", *limits);
  auto settled = [&](CountLookup count) -> std::optional<Result<FastExtEntry>> {
    auto entry = cache.Lookup(hex, count);
    if (!entry) return std::nullopt;
    if (FileExists(entry->Path(kGchName)) && FileExists(entry->Path(kBindingName)))
      return Result<FastExtEntry>(EntryAt(*entry));
    return Result<FastExtEntry>(Error{"the fast extension build failed before: see " + entry->Path(kFailedName)});
  };
  if (auto done = settled(CountLookup::kYes)) return *done;
  auto lock = cache.Lock(hex, timeout);
  if (!lock) return Error{"fast extension build lock: " + lock.error()};
  if (auto done = settled(CountLookup::kNo)) return *done;

  auto staged = cache.Stage();
  if (!staged) return Error{staged.error()};
  if (Status s = WriteFileAtomic(staged->Join(kHeaderName), kHeaderText); !s) return Error{s.error()};
  auto pch = AssemblePchCommand(req, setup, staged->Join(kHeaderName), staged->Join(kGchName), include_ext_dir);
  if (!pch) return Error{pch.error()};
  auto binding = AssembleBindingCommand(req, setup, BindingSource(include_ext_dir), staged->Join(kBindingName));
  if (!binding) return Error{binding.error()};
  std::fprintf(stderr,
               "kvault: preparing the fast extension build for g++ once per toolchain and flag set "
               "(a light precompiled header of about 320 MB and the binding under %s/pch/, about a minute)\n",
               cache_root.c_str());
  Json meta{{"key_fields", key->Describe()}};
  Json steps = Json::array();
  for (const CompileCommand* cmd : {&*pch, &*binding}) {
    CommandSpec spec;
    spec.argv = cmd->argv;
    spec.cwd = staged->path();
    auto run = RunCommand(spec, timeout);
    if (!run) return Error{"g++ could not be started: " + run.error()};
    steps.push_back(Json{{"command", ShellQuote(cmd->argv)}, {"seconds", run->seconds},
                         {"diagnostics", Truncate(run->output, kMaxDiagnostics)}});
    meta["steps"] = steps;
    if (run->timed_out) return Error{"preparing the fast extension build ran past the timeout"};
    if (run->exit_code == 0) continue;
    std::string why = "g++ " + DescribeTermination(run->exit_code, run->term_signal);
    std::fprintf(stderr, "kvault: preparing the fast extension build failed (%s); candidates build as before\n",
                 why.c_str());
    // Only a verdict of g++'s is final; a signal (e.g. out of memory) may pass.
    if (run->term_signal == 0) {
      meta["failure"] = why;
      for (const char* name : {kGchName, kBindingName}) (void)::unlink(staged->Join(name).c_str());
      if (Status s = WriteFileAtomic(staged->Join(kFailedName), meta.dump(2) + "\n"); !s) return Error{s.error()};
      if (auto stored = cache.Commit(hex, std::move(*staged), meta); !stored)
        return Error{"compile cache: " + stored.error()};
    }
    return Error{"preparing the fast extension build failed: " + why};
  }
  if (Status s = WriteFileAtomic(staged->Join("build.json"), meta.dump(2) + "\n"); !s) return Error{s.error()};
  auto stored = cache.Commit(hex, std::move(*staged), meta);
  if (!stored) return Error{"compile cache: " + stored.error()};
  if (!FileExists(stored->Path(kBindingName)))  // a concurrent writer recorded a failure
    return Error{"the fast extension build failed before: see " + stored->Path(kFailedName)};
  std::fprintf(stderr, "kvault: fast extension build ready (%s)\n", stored->dir.c_str());
  return EntryAt(*stored);
}

}  // namespace kvault
