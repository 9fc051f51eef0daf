#pragma once
// The build of a compiled candidate (extension or native format) as the engine asks
// for it, shared by Verifier::Build and the compile pool of `kvault eval`, so both
// ask for exactly the same build (and so the same cache entry).
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "candidate/candidate.h"
#include "engine/options.h"
#include "toolchain/build_request.h"
#include "util/json.h"
#include "util/result.h"

namespace kvault {

// Builds a request (BuildExtension's signature): the seam through which a Verifier
// builds, so `kvault eval` can hand it builds made ahead by its compile pool.
using BuildFunction =
    std::function<Result<BuildResult>(const BuildRequest&, std::chrono::milliseconds timeout)>;

// Why a compiled source of `language` ("cpp", "cuda", "hip") cannot run on
// `backend`; empty when it can.
std::string BackendMismatch(const std::string& language, Backend backend);

// Why `candidate` cannot run on `backend`, judged before anything runs; empty when it
// can: BackendMismatch of a compiled candidate's language, which its file name
// declares (a suite's or a request's choice, not the candidate's). What a KernelBench
// file builds is its own answer, judged from its recorded load_inline calls
// (ForeignLanguageVerdict), never from its text.
std::string BackendMismatch(const Candidate& candidate, Backend backend);

// Why a Triton candidate cannot run on the worker whose `hello` answer is given: its
// Python has no triton (hello's `triton` null); empty for any other candidate, or when
// the hello does not say. The hello comes from a worker before any candidate code ran
// in it, so unlike the candidate worker's own word this is the machine's limit.
std::string MissingRuntime(const Candidate& candidate, const Json& hello);

// The message of the candidate's own `compile_error` when its content, where nothing
// declared its language, is code `language` ("cuda", "hip", "cpp") that `backend`
// cannot build: a KernelBench file whose load_inline call builds CUDA on the cpu
// backend, or serve's request without `language` whose code is HIP on cpu. `how`
// says where the language was seen. The verification's build object names the
// language under kForeignLanguageKey (docs/outcomes.md).
std::string ForeignLanguageVerdict(const std::string& language, Backend backend, const std::string& how);
inline constexpr char kForeignLanguageKey[] = "foreign_language";

// The language a recorded attempt's answer was in where its backend could not build
// it (kForeignLanguageKey of the environment's build object); "" for any other.
std::string ForeignLanguageOf(const Json& environment);

// True for the formats the engine compiles into a shared object.
bool IsCompiledFormat(CandidateFormat format);

// The request for `candidate` under `options`, given the worker's hello answer (torch
// headers and libraries, the device's arch). Error when the hello answer has no
// usable build information.
// `extra_flags`, `extra_link_flags`: a load_inline call's own (InlineUnit; part of the key).
Result<BuildRequest> CandidateBuildRequest(const Candidate& candidate, const EngineOptions& options,
                                           const Json& hello, const std::vector<std::string>& extra_flags = {},
                                           const std::vector<std::string>& extra_link_flags = {});

// A request like those of the backend's usual extension candidates and load_inline
// calls (CUDA on a CUDA device, C++ on the CPU; no flags of their own), for preparing
// their toolchain ahead (CompilePool::Prepare). Error on ROCm (hipcc has no lite
// build) or when the hello answer has no usable build information.
Result<BuildRequest> TypicalExtensionRequest(const EngineOptions& options, const Json& hello);

// A text that is equal for two requests exactly when they ask for the same build.
std::string BuildRequestIdentity(const BuildRequest& request);

}  // namespace kvault
