#include "toolchain/build.h"

#include <chrono>

#include "cache/cache.h"
#include "toolchain/build_key.h"
#include "toolchain/flags.h"
#include "toolchain/lite_diagnostics.h"
#include "toolchain/lite_ext.h"
#include "toolchain/pch.h"
#include "toolchain/tools.h"
#include "util/env.h"
#include "util/env_vars.h"
#include "util/files.h"
#include "util/sha256.h"
#include "util/strings.h"
#include "util/subprocess.h"

namespace kvault {
namespace {

constexpr size_t kMaxDiagnostics = 16 * 1024;

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A PyTorch built without CUDA ships part of c10/cuda and ATen/cuda but not the header
// its CMake writes (c10/cuda/impl/cuda_cmake_macros.h), so any source that includes
// them fails to compile there, whatever it says.
bool TorchHasCuda(const TorchBuildInfo& torch) {
  for (const std::string& dir : torch.include_paths)
    if (FileExists(dir + "/c10/cuda/impl/cuda_cmake_macros.h")) return true;
  return false;
}

// The PyTorch CUDA header a failed build's diagnostics say is missing ("fatal error:
// c10/cuda/...: No such file"), "" when they say no such thing.
std::string MissingTorchCudaHeader(const std::string& diagnostics) {
  for (const char* prefix : {"fatal error: c10/cuda/", "fatal error: ATen/cuda/"}) {
    size_t at = diagnostics.find(prefix);
    if (at == std::string::npos) continue;
    at += std::string_view("fatal error: ").size();
    const size_t end = diagnostics.find(':', at);
    if (end != std::string::npos && diagnostics.compare(end, 27, ": No such file or directory") == 0)
      return diagnostics.substr(at, end - at);
  }
  return "";
}

// The compiler driver's own line saying it does not know the target `arch` ("clang:
// error: invalid target ID 'gfx942'", "nvcc fatal : Unsupported gpu architecture");
// "" when there is none. Only the driver's lines count: a source's #error text starts
// with its file name.
std::string UnknownTargetLine(const std::string& diagnostics, const std::string& arch) {
  for (const std::string& line : Split(diagnostics, '\n'))
    if (StartsWith(line, "clang: error: invalid target ID '" + arch + "'") ||
        (StartsWith(line, "nvcc fatal") && line.find("Unsupported gpu architecture") != std::string::npos))
      return line;
  return "";
}

bool TorchHasHip(const TorchBuildInfo& torch) {
  for (const std::string& dir : torch.include_paths)
    if (FileExists(dir + "/c10/hip/HIPStream.h")) return true;
  return false;
}

std::string Label(const CompilerSetup& setup, const std::string& identity, const std::string& variant) {
  std::string label = ToolName(setup.tool);
  if (std::string v = ShortVersion(setup.tool, identity); !v.empty()) label += " " + v;
  if (!variant.empty()) label += " (" + variant + ")";
  return label;
}

// How an extension source is compiled: the full way (PyTorch's headers, with the
// precompiled header where it applies) or the lite way (toolchain/lite_ext.h).
struct ExtBuild {
  enum class Kind { kFull, kLite } kind = Kind::kFull;
  std::string include_dir;           // include_lite/
  std::string link_object;           // the lite object
  std::vector<std::string> defines;  // LiteExtDefines
};

// Everything that decides the artifact's bytes, field by field. The lite build hashes
// its header folder (and its command holds the folder and the object as placeholders).
Result<KeyHasher> BuildKey(const BuildRequest& req, const CompilerSetup& setup,
                           const std::string& source, const std::string& identity, const ExtBuild& ext = {}) {
  CommandSlots slots{"<source>", "<module>", "<output>"};
  if (ext.kind == ExtBuild::Kind::kLite) {
    slots.ext_include_dir = "<include_lite>";
    if (!req.compile_only) slots.link_object = "<lite.o>";
    slots.ext_defines = ext.defines;
  }
  auto cmd = AssembleCommand(req, setup, slots);
  if (!cmd) return Error{cmd.error()};
  KeyHasher h;
  h.Add("kvault-build", "2");
  h.Add("source", source);
  AddLocalIncludeFields(h, req.source_path, source);
  h.Add("language", ToString(req.language));
  h.Add("backend", ToString(req.backend));
  h.Add("arch", req.arch);
  h.Add("compile_only", req.compile_only ? "1" : "0");
  h.Add("command", ShellQuote(cmd->argv));
  AddToolchainKeyFields(h, identity, setup.tool_path, req.torch);  // compiler, torch headers
  if (req.language == Language::kHip) {
    auto digest = DirectoryDigest(setup.include_hip_dir);
    if (!digest) return Error{"HIP portability headers: " + digest.error()};
    h.Add("include_hip", *digest);
  }
  if (req.kind == SourceKind::kNative) {  // extension keys stay as they were
    auto digest = DirectoryDigest(setup.native_include_dir);
    if (!digest) return Error{"native-format header folder: " + digest.error()};
    h.Add("kind", "native");
    h.Add("native_include", *digest);
  }
  if (ext.kind == ExtBuild::Kind::kLite) {
    auto digest = DirectoryDigest(ext.include_dir);
    if (!digest) return Error{"lite extension headers: " + digest.error()};
    h.Add("lite_ext", *digest);
  }
  return h;
}

// A hit reports the stored build's command, toolchain and diagnostics.
BuildResult FromCache(const CacheEntry& e, const std::string& artifact_name, BuildResult r,
                      std::chrono::steady_clock::time_point start) {
  const Json& meta = e.manifest.meta;
  r.ok = true;
  r.cache_hit = true;
  r.artifact = e.Path(artifact_name);
  r.command = meta.value("command", std::string());
  r.toolchain = meta.value("toolchain", std::string());
  r.diagnostics = meta.value("diagnostics", std::string());
  r.pch = meta.value("pch", false);
  r.pch_note = meta.value("pch_note", std::string());
  r.lite_ext = meta.value("lite_ext", false);
  if (r.lite_ext_note.empty()) r.lite_ext_note = meta.value("lite_ext_note", std::string());
  r.seconds = SecondsSince(start);
  return r;
}

// The precompiled PyTorch header for this build, "" (and `note` set) when it does not
// apply or cannot be had: the caller then compiles without it. $KVAULT_PCH=0 turns
// it off.
std::string PchFor(const BuildRequest& req, const CompilerSetup& setup, const std::string& source,
                   const std::string& identity, const std::string& cache_root,
                   std::chrono::milliseconds timeout, std::string& note) {
  if (req.kind == SourceKind::kNative) {
    note = "native sources include no PyTorch header";
  } else if (setup.tool != Tool::kCxx) {
    note = "precompiled headers are for g++ only";
  } else if (KvaultEnv("KVAULT_PCH").value_or("1") == "0") {
    note = "turned off (KVAULT_PCH=0)";
  } else if (!PchApplies(source)) {
    note = "the source does not start with #include <torch/extension.h> (after standard headers only)";
  } else if (auto pch = EnsurePrecompiledHeader(req, setup, identity, cache_root, timeout); !pch) {
    note = pch.error();
  } else {
    return *pch;
  }
  return "";
}

}  // namespace

std::string DefaultIncludeHipDir() {
  return SourceRoot() + "/include_hip";
}

std::string DefaultNativeIncludeDir() {
  return SourceRoot() + "/include";
}

namespace {

// What one BuildExtension call shares between its lite and its full attempt.
struct BuildContext {
  const BuildRequest& req;
  const CompilerSetup& setup;
  const std::string& source;
  const std::string& identity;
  std::string cache_root;
  std::chrono::milliseconds timeout;
  std::chrono::steady_clock::time_point start;
};

// The first line of `diagnostics` that g++ marks as an error, else the first line.
std::string FirstError(const std::string& diagnostics) {
  size_t at = diagnostics.find("error:");
  size_t from = at == std::string::npos ? 0 : diagnostics.rfind('\n', at);
  from = from == std::string::npos || at == std::string::npos ? 0 : from + 1;
  return Truncate(diagnostics.substr(from, diagnostics.find('\n', from) - from), 300);
}

// One build under `key`: a cache hit, or a compile stored on success, the way `ext`
// says (the full way with the precompiled header where it applies). `lite_ext_note`
// (why the lite way was not taken) goes into the record.
Result<BuildResult> BuildUnderKey(const BuildContext& c, const KeyHasher& key, const ExtBuild& ext,
                                  const std::string& lite_ext_note) {
  const BuildRequest& req = c.req;
  BuildResult r;
  r.key = key.Hex();
  r.module_name = ModuleNameForKey(r.key);
  r.lite_ext_note = lite_ext_note;
  const std::string artifact_name = r.module_name + (req.compile_only ? ".o" : ".so");
  auto limits = CacheLimits::FromEnv();
  if (!limits) return Error{limits.error()};
  Cache cache(c.cache_root, "build", *limits);
  // An entry without the artifact (another kind of build under the same key cannot
  // happen: the artifact name follows the key) is treated as a miss.
  auto usable = [&](std::optional<CacheEntry> e) -> std::optional<CacheEntry> {
    if (e && FileExists(e->Path(artifact_name))) return e;
    return std::nullopt;
  };
  if (auto hit = usable(cache.Lookup(r.key))) return FromCache(*hit, artifact_name, std::move(r), c.start);
  // Another process may be building the same entry; wait for it rather than compile
  // twice. A lock that cannot be had in time only costs the sharing, so go on without.
  auto lock = cache.Lock(r.key, c.timeout);
  if (lock) {
    if (auto hit = usable(cache.Lookup(r.key, CountLookup::kNo)))
      return FromCache(*hit, artifact_name, std::move(r), c.start);
  }

  auto scratch = TempDir::Create("", "kvault-build");
  if (!scratch) return Error{scratch.error()};
  auto staged = cache.Stage();
  if (!staged) return Error{"compile cache: " + staged.error()};
  std::string built = staged->Join(artifact_name);
  CommandSlots slots{req.source_path, r.module_name, built};
  if (ext.kind == ExtBuild::Kind::kLite) {
    r.pch_note = "the lite extension build needs no precompiled header";
    slots.ext_include_dir = ext.include_dir;
    slots.link_object = ext.link_object;
    slots.ext_defines = ext.defines;
  } else {
    // The precompiled header changes how the source is compiled, not what it compiles
    // to, so it is not part of the key; build.json records which path was taken.
    slots.pch_header = PchFor(req, c.setup, c.source, c.identity, c.cache_root, c.timeout, r.pch_note);
  }
  const std::string& pch = slots.pch_header;
  auto cmd = AssembleCommand(req, c.setup, slots);
  if (!cmd) return Error{cmd.error()};
  r.command = ShellQuote(cmd->argv);
  r.toolchain = Label(c.setup, c.identity, ext.kind == ExtBuild::Kind::kLite ? "lite extension build" : cmd->variant);
  CommandSpec spec;
  spec.argv = cmd->argv;
  spec.cwd = scratch->path();
  if (req.confine) {
    auto confined = req.confine(cmd->argv, {scratch->path(), staged->path()});
    if (!confined) return Error{"the compile's sandbox: " + confined.error()};
    spec.argv = std::move(*confined);
  }
  auto run = RunCommand(spec, c.timeout);
  if (!run) return Error{ToolName(c.setup.tool) + " could not be started: " + run.error()};
  r.diagnostics = Truncate(run->output, kMaxDiagnostics);
  r.timed_out = run->timed_out;
  // -Winvalid-pch: g++ found the .gch but read the header as text instead.
  r.pch = !pch.empty() && r.diagnostics.find("[-Winvalid-pch]") == std::string::npos;
  if (!pch.empty() && !r.pch) r.pch_note = "g++ rejected the precompiled header (see the diagnostics)";
  if (run->timed_out || run->exit_code != 0) {
    if (!run->timed_out && run->exit_code != 0 && r.diagnostics.empty())
      r.diagnostics = ToolName(c.setup.tool) + " " + DescribeTermination(run->exit_code, run->term_signal);
    r.seconds = SecondsSince(c.start);
    return r;
  }
  if (!FileExists(built))
    return Error{ToolName(c.setup.tool) + " exited 0 but wrote no " + artifact_name};
  r.lite_ext = ext.kind == ExtBuild::Kind::kLite;
  Json meta{{"key_fields", key.Describe()}, {"command", r.command},
            {"toolchain", r.toolchain}, {"diagnostics", r.diagnostics},
            {"compile_seconds", run->seconds}, {"pch", r.pch}, {"pch_note", r.pch_note},
            {"lite_ext", r.lite_ext}, {"lite_ext_note", r.lite_ext_note}};
  if (Status s = WriteFileAtomic(staged->Join("build.json"), meta.dump(2) + "\n"); !s)
    return Error{"compile cache: " + s.error()};
  auto stored = cache.Commit(r.key, std::move(*staged), meta);
  if (!stored) return Error{"compile cache: " + stored.error()};
  r.ok = true;
  r.artifact = stored->Path(artifact_name);
  r.seconds = SecondsSince(c.start);
  return r;
}

// The compiler a request names, its paths and its identity (part of every cache key).
struct Toolchain {
  CompilerSetup setup;
  std::string identity;
};

Result<Toolchain> SetUpToolchain(const BuildRequest& req) {
  auto tool = ToolFor(req.language, req.backend);
  if (!tool) return Error{tool.error()};
  Toolchain t;
  t.setup.tool = *tool;
  t.setup.tool_path = ToolPath(*tool);
  t.setup.include_hip_dir = req.include_hip_dir.empty() ? DefaultIncludeHipDir() : req.include_hip_dir;
  t.setup.torch_has_hip = TorchHasHip(req.torch);
  t.setup.native_include_dir =
      req.native_include_dir.empty() ? DefaultNativeIncludeDir() : req.native_include_dir;
  auto identity = ToolIdentity(t.setup.tool_path);
  if (!identity)
    return Error{ToolName(*tool) + " is not usable (set " + ToolEnvVar(*tool) + "): " + identity.error()};
  t.identity = std::move(*identity);
  return t;
}

std::string LiteDir(const BuildRequest& req) {
  return req.include_lite_dir.empty() ? DefaultIncludeLiteDir() : req.include_lite_dir;
}

std::string CacheRoot(const BuildRequest& req) {
  return req.cache_dir.empty() ? DefaultCacheDir() : req.cache_dir;
}

}  // namespace

Status PrepareExtensionBuilds(const BuildRequest& like, std::chrono::milliseconds timeout) {
  if (!LiteExtEnabled()) return Error{"the lite extension build is turned off (KVAULT_LITE_EXT=0)"};
  auto toolchain = SetUpToolchain(like);
  if (!toolchain) return Error{toolchain.error()};
  const std::string lite_dir = LiteDir(like);
  if (std::string why = LiteExtExcluded(like, toolchain->setup, "", lite_dir); !why.empty()) return Error{why};
  auto object = EnsureLiteExt(like, toolchain->setup, toolchain->identity, lite_dir, CacheRoot(like), timeout);
  if (!object) return Error{object.error()};
  return Status::Ok();
}

Result<BuildResult> BuildExtension(const BuildRequest& req, std::chrono::milliseconds timeout) {
  auto start = std::chrono::steady_clock::now();
  auto toolchain = SetUpToolchain(req);
  if (!toolchain) return Error{toolchain.error()};
  const CompilerSetup& setup = toolchain->setup;
  const std::string& identity = toolchain->identity;
  auto source = ReadFile(req.source_path);
  if (!source) return Error{source.error()};
  auto key = BuildKey(req, setup, *source, identity);
  if (!key) return Error{key.error()};
  const BuildContext c{req, setup, *source, identity,
                       CacheRoot(req), timeout, start};

  // The lite extension build first; a source the lite headers do not compile is built
  // again the full way, and the record says why.
  std::string lite_note;
  if (!LiteExtEnabled()) {
    lite_note = "turned off (KVAULT_LITE_EXT=0)";
  } else {
    ExtBuild lite{ExtBuild::Kind::kLite, LiteDir(req), "", {}};
    lite_note = LiteExtExcluded(req, setup, *source, lite.include_dir);
    if (lite_note.empty()) {
      // A compile-only build links nothing: the headers are all it needs of the lite way.
      auto object = req.compile_only ? Result<std::string>(std::string())
                                     : EnsureLiteExt(req, setup, identity, lite.include_dir, c.cache_root, timeout);
      lite.link_object = object ? *object : "";
      lite.defines = LiteExtDefines(*source);
      auto lite_key = object ? BuildKey(req, setup, *source, identity, lite) : Result<KeyHasher>(Error{object.error()});
      if (!lite_key) {
        lite_note = lite_key.error();
      } else {
        auto built = BuildUnderKey(c, *lite_key, lite, "");
        if (!built || built->ok || built->timed_out || req.lite_only) return built;
        lite_note = "the lite headers did not compile it (" + FirstError(built->diagnostics) + ")";
        // Errors of the source's own are its compile error under any headers.
        const LiteCompileJudgement own =
            JudgeLiteCompileError(req, setup, *source, built->diagnostics, lite.include_dir, timeout);
        if (own.own) {
          built->lite_verdict = true;
          built->diagnostics = WithPyTorchNames(std::move(built->diagnostics));
          built->lite_ext_note = "not built the full way: the lite compile's errors are the source's own (" +
                                 own.why + ")";
          built->seconds = SecondsSince(start);
          return built;
        }
        lite_note += "; the full build decides (" + own.why + ")";
      }
    }
  }
  if (req.lite_only) return Error{"not built: only the lite build was asked for, and " + lite_note};
  auto built = BuildUnderKey(c, *key, ExtBuild{}, lite_note);
  // A target the compiler does not know is the request's (--arch), not the source's.
  if (built && !built->ok && !built->timed_out && !req.arch.empty())
    if (std::string line = UnknownTargetLine(built->diagnostics, req.arch); !line.empty())
      return Error{ToolName(setup.tool) + " cannot build for " + req.arch + " (" + line +
                   "); `kvault doctor` lists the targets it knows"};
  // The machine's PyTorch, not the candidate, lacks what the full way compiled.
  if (built && !built->ok && !built->timed_out && setup.tool == Tool::kNvcc && !TorchHasCuda(req.torch))
    if (std::string header = MissingTorchCudaHeader(built->diagnostics); !header.empty())
      return Error{"the worker's PyTorch " + req.torch.torch_version + " is a build without CUDA (no " + header +
                   "), and this source needs its CUDA headers: the lite build did not take it (" + lite_note +
                   "); use a CUDA build of PyTorch for $KVAULT_PYTHON (docs/toolchains.md)"};
  return built;
}

}  // namespace kvault
