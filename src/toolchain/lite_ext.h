#pragma once
// The lite extension build (docs/toolchains.md, "The lite extension build"; on by
// default, KVAULT_LITE_EXT=0 turns it off). A PyTorch extension candidate costs nvcc
// about a minute and g++ about 15 s even when its own code is a few lines: every pass
// parses PyTorch's headers. The lite build compiles the candidate against
// include_lite/, whose <torch/extension.h> declares only the tensor API extension
// candidates use around their kernels (tensors, factories, options, checks, dispatch
// macros, CUDA streams and guards, PYBIND11_MODULE) and links in one object compiled
// once with PyTorch's full headers (include_lite/kvault_lite/lite.cc) that forwards every
// call to PyTorch and makes the Python module as pybind11 would.
//
// A source that includes a PyTorch header the lite folder lacks, or that the lite
// headers do not compile, is built the full way and the record says why, unless the
// lite compile's errors are plainly the source's own (JudgeLiteCompileError): then
// they are its compile error and no full build is made.
//
// One entry of the cache kind "pch" (docs/cache.md) per toolchain and flag set:
//   <cache>/pch/<key[0:2]>/<key>/kvault_lite.o        lite.cc, compiled by g++
//   <cache>/pch/<key[0:2]>/<key>/build.json | failed.json
#include <chrono>
#include <string>

#include "toolchain/build_request.h"
#include "toolchain/flags.h"
#include "util/result.h"
#include "util/sha256.h"

namespace kvault {

// $KVAULT_LITE_EXT is not "0".
bool LiteExtEnabled();

// The lite headers' folder: $KVAULT_SOURCE_ROOT/include_lite, else <source root at
// build time>/include_lite.
std::string DefaultIncludeLiteDir();

// Why the lite build does not apply to `source` ("" when it does): not g++ or nvcc on
// a CUDA or C++ source, a native build, a local include, or an
// #include of a PyTorch or pybind11 header (torch/, ATen/, c10/, caffe2/, pybind11/,
// Python.h) that `include_lite_dir` does not hold (c10/util/Half.h and BFloat16.h are
// PyTorch's own and allowed).
std::string LiteExtExcluded(const BuildRequest& request, const CompilerSetup& setup, const std::string& source,
                            const std::string& include_lite_dir);

// The flags the candidate's lite compile adds: -DKVAULT_LITE_HALF=1 when the source
// names half or bfloat16 in any spelling (PyTorch's Half and BFloat16 are then defined,
// not only declared: they cost nvcc seconds).
std::vector<std::string> LiteExtDefines(const std::string& source);

// The entry's key: format version, a digest of every file under `include_lite_dir`, the
// object's command line with placeholders, g++'s identity and the toolchain fields.
Result<KeyHasher> LiteExtKey(const BuildRequest& request, const CompilerSetup& setup,
                             const std::string& compiler_identity, const std::string& include_lite_dir);

// The object for `request` (kvault_lite.o), built on first use under the entry's lock
// (said on stderr). Error, for the caller to build the full way, when g++ cannot be
// run, rejected lite.cc (kept: not retried), ran past `timeout`, or the cache cannot be
// written.
Result<std::string> EnsureLiteExt(const BuildRequest& request, const CompilerSetup& setup,
                                  const std::string& compiler_identity, const std::string& include_lite_dir,
                                  const std::string& cache_root, std::chrono::milliseconds timeout);

// Whether the failed lite compile of `request`'s `source` failed on the source's own
// errors (toolchain/lite_diagnostics.h): then no full build could compile it either.
// Undeclared names are looked up in the full build's preprocessed source (its command
// with -E -dD, confined by `request.confine`, within `timeout`); a name found there, a
// preprocessor that fails, or any other doubt is `own = false` with `why`.
struct LiteCompileJudgement {
  bool own = false;
  std::string why;  // own: the first error; else the doubt
};
LiteCompileJudgement JudgeLiteCompileError(const BuildRequest& request, const CompilerSetup& setup,
                                           const std::string& source, const std::string& diagnostics,
                                           const std::string& include_lite_dir, std::chrono::milliseconds timeout);

}  // namespace kvault
