#pragma once
// BuildExtension: compile an extension-format candidate into a Python extension
// module (or a native-format candidate into a plain shared library, BuildRequest::kind)
// with g++, nvcc, nvcc + HIP portability headers, or hipcc, directly (not through
// torch.utils.cpp_extension), through the compile cache. docs/toolchains.md
// describes the commands and the cache key.
//
//   BuildRequest req;
//   req.source_path = "/abs/relu.cu";
//   req.language = Language::kCuda;
//   req.backend = Backend::kCuda;
//   req.arch = "sm_90";
//   req.torch = *TorchBuildInfo::FromHelloResponse(hello);
//   auto r = BuildExtension(req, std::chrono::minutes(5));
//   if (!r) infra_error(r.error());           // no compiler, unreadable source, disk full
//   else if (!r->ok) compile_error(r->diagnostics);
//   else load(r->artifact, r->module_name);
//
// Thread-safe; concurrent builds of the same source wait for each other (entry lock).
#include <chrono>

#include "toolchain/build_request.h"
#include "util/result.h"

namespace kvault {

// Error only for infrastructure faults: the compiler is missing or does not run, the
// source cannot be read, the request is unsupported (language/backend pair, bad arch,
// a linked HIP build against a PyTorch without HIP), or the cache cannot be written.
// A source the compiler rejects, or a compile that runs past `timeout`, is ok=false.
Result<BuildResult> BuildExtension(const BuildRequest& request, std::chrono::milliseconds timeout);

// Makes the one-time cache entries that builds like `like` use (the lite extension
// build's object, toolchain/lite_ext.h), under the same entry and lock as those builds,
// so that the first candidate's build does not wait for it. `like.source_path` is not
// read. Error when no such entry applies (the lite build is off, or not for this
// compiler or kind) or it cannot be made; the builds then report what they find, as
// without it.
Status PrepareExtensionBuilds(const BuildRequest& like, std::chrono::milliseconds timeout);

// The portability headers' directory used when the request names none:
// $KVAULT_SOURCE_ROOT/include_hip, else <source root at build time>/include_hip.
std::string DefaultIncludeHipDir();

// The folder holding kvault/native.h used when a native request names none:
// $KVAULT_SOURCE_ROOT/include, else <source root at build time>/include.
std::string DefaultNativeIncludeDir();

}  // namespace kvault
