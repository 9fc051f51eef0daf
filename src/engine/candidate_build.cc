#include "engine/candidate_build.h"

#include "engine/worker_sandbox.h"
#include "toolchain/backend.h"
#include "worker/protocol.h"

namespace kvault {
namespace {

Language LanguageOf(const std::string& language) {
  if (language == "cuda") return Language::kCuda;
  if (language == "hip") return Language::kHip;
  return Language::kCpp;
}

}  // namespace

std::string BackendMismatch(const std::string& language, Backend backend) {
  if (language == "cpp" && backend != Backend::kCpu)
    return "C++ candidates run on the cpu backend, not " + std::string(ToString(backend));
  if (language == "cuda" && backend != Backend::kCuda)
    return "CUDA candidates need the cuda backend (an NVIDIA GPU), not " +
           std::string(ToString(backend));
  if (language == "hip" && backend == Backend::kCpu)
    return "HIP candidates need a GPU backend (hip on AMD, cuda on NVIDIA), not cpu";
  return "";
}

std::string BackendMismatch(const Candidate& candidate, Backend backend) {
  return IsCompiledFormat(candidate.format) ? BackendMismatch(candidate.language, backend) : "";
}

std::string MissingRuntime(const Candidate& candidate, const Json& hello) {
  if (candidate.format != CandidateFormat::kTriton || !hello.is_object()) return "";
  auto triton = hello.find(protocol::field::kTriton);
  if (triton == hello.end() || !triton->is_null()) return "";
  const std::string python = hello.value(protocol::field::kExecutable, std::string("the worker's Python"));
  return "Triton candidates need the triton package in the worker's Python (" + python +
         "), which has none: install it there (pip install triton) or set KVAULT_PYTHON to a Python "
         "that has it (kvault doctor)";
}

std::string ForeignLanguageVerdict(const std::string& language, Backend backend, const std::string& how) {
  const std::string name = language == "cuda" ? "CUDA" : language == "hip" ? "HIP" : language == "cpp" ? "C++" : language;
  return "the answer builds " + name + " code (" + how + "), which the " + std::string(ToString(backend)) +
         " backend cannot build or run: " + BackendMismatch(language, backend);
}

std::string ForeignLanguageOf(const Json& environment) {
  const Json build = environment.is_object() ? environment.value("build", Json()) : Json();
  if (!build.is_object()) return "";
  auto it = build.find(kForeignLanguageKey);
  return it != build.end() && it->is_string() ? it->get<std::string>() : "";
}

bool IsCompiledFormat(CandidateFormat format) {
  return format == CandidateFormat::kExtension || format == CandidateFormat::kNative;
}

Result<BuildRequest> CandidateBuildRequest(const Candidate& c, const EngineOptions& options,
                                           const Json& hello, const std::vector<std::string>& extra_flags,
                                           const std::vector<std::string>& extra_link_flags) {
  auto torch = TorchBuildInfo::FromHelloResponse(hello);
  if (!torch) return Error{"worker gave no usable build information: " + torch.error()};
  BuildRequest req;
  req.source_path = c.path;
  req.language = LanguageOf(c.language);
  req.backend = options.backend;
  req.arch = options.arch;
  if (req.arch.empty() && options.backend != Backend::kCpu) {
    // The device's own target, from a worker on a device of this backend; a
    // compile-only check on a machine without one has none to take.
    const Json device = hello.value(protocol::field::kDevice, Json::object());
    const std::string backend(ToString(options.backend));
    if (device.is_object() && device.contains(protocol::field::kBackend) &&
        device[protocol::field::kBackend] != Json(backend))
      return Error{"no --arch, and this machine has no " + backend + " device to take its target from: give --arch (" +
                   (options.backend == Backend::kHip ? "gfx90a, gfx942, ..." : "sm_90, sm_100, ...") + ")"};
    if (device.is_object()) req.arch = device.value(protocol::field::kArch, std::string());
  }
  req.torch = std::move(*torch);
  req.extra_flags = extra_flags;
  req.extra_link_flags = extra_link_flags;
  req.compile_only = options.compile_only;
  req.cache_dir = options.cache_dir;
  req.include_hip_dir = options.source_root + "/include_hip";
  // Candidate code and flags: compiled in the sandbox (docs/sandbox.md, "Builds").
  req.confine = [options, source = c.path](const std::vector<std::string>& argv,
                                          const std::vector<std::string>& writable) {
    return SandboxBuildCommand(options, source, argv, writable);
  };
  if (c.format == CandidateFormat::kNative) {
    req.kind = SourceKind::kNative;
    req.native_include_dir = options.source_root + "/include";
  }
  return req;
}

Result<BuildRequest> TypicalExtensionRequest(const EngineOptions& options, const Json& hello) {
  if (options.backend == Backend::kHip) return Error{"no toolchain to prepare for hipcc"};
  Candidate typical;
  typical.format = CandidateFormat::kExtension;
  typical.language = options.backend == Backend::kCuda ? "cuda" : "cpp";
  return CandidateBuildRequest(typical, options, hello);
}

std::string BuildRequestIdentity(const BuildRequest& r) {
  Json j{{"source", r.source_path},
         {"kind", r.kind == SourceKind::kNative ? "native" : "extension"},
         {"language", std::string(ToString(r.language))},
         {"backend", std::string(ToString(r.backend))},
         {"arch", r.arch},
         {"compile_only", r.compile_only},
         {"cache_dir", r.cache_dir},
         {"extra_flags", r.extra_flags},
         {"extra_link_flags", r.extra_link_flags},
         {"lite_only", r.lite_only},
         {"include_hip_dir", r.include_hip_dir},
         {"native_include_dir", r.native_include_dir},
         {"torch_version", r.torch.torch_version},
         {"torch_include", r.torch.include_paths},
         {"torch_libs", r.torch.library_paths},
         {"cxx11_abi", r.torch.cxx11_abi}};
  return j.dump();
}

}  // namespace kvault
