#pragma once
// The compiler and linker flags a candidate asks for (a load_inline call's
// extra_cflags, extra_cuda_cflags and extra_ldflags), made into argv entries the
// engine may pass on. The engine runs these compilers itself, so a flag is never
// trusted: each one must be on the allow-list of its compiler (optimisation, target
// architecture, defines, warnings, floating-point and register options), anything
// else is refused by name (docs/toolchains.md, "Flags a candidate may pass").
// Response files (`@file`), wrappers, plugins, other compilers or linkers, include
// and library paths, output and dump options are never on a list.
//
// What LLM-written files pass is normalised first, as PyTorch's own build reads it:
// an entry is split at whitespace (PyTorch's ninja file joins the list with spaces,
// so "" is no flag and "-O3 --use_fast_math" two), and a flag given twice counts
// once. A flag whose value is a separate argument (`-Xcompiler -O3`, `-gencode
// arch=...`, `-arch sm_90`) keeps it. A library of the link list (`-lcublas` among
// extra_cuda_cflags) is dropped from compile flags: PyTorch's compile ignores it too.
#include <string>
#include <vector>

#include "toolchain/tools.h"
#include "util/result.h"

namespace kvault {

// The compile flags of `given` for `tool` (g++ for extra_cflags, nvcc for
// extra_cuda_cflags), normalised; Error "flag '<flag>' is not allowed for <tool>"
// (the first refused one, a flag of more than 1024 characters among them: std::regex
// would overflow the stack), "more than 256 flags for <tool>", or for a flag that
// needs a value and has none.
Result<std::vector<std::string>> CandidateCompileFlags(Tool tool, const std::vector<std::string>& given);

// The link flags of `given` (extra_ldflags), normalised: libraries of the CUDA
// toolkit and the C runtime by `-l<name>`; `-fopenmp` and `-pthread` as the libraries
// g++ links for them (`-lgomp`, `-lpthread`). A `-L` folder is dropped when it is one
// the compiler searches anyway (a CUDA toolkit's lib64 or the system's), refused
// otherwise, as is anything else.
Result<std::vector<std::string>> CandidateLinkFlags(const std::vector<std::string>& given);

// The folders of `given` (extra_include_paths), each trimmed as PyTorch trims it, ""
// dropped. The engine builds no call that has any (PyTorch's build in the candidate's
// sandbox does), so where a folder lies is not judged; but PyTorch writes each as
// -I<folder> into a command line a shell reads (its ninja file), so a folder must be
// plain (letters, digits, `_./+-`): Error "folder '<path>' is not a plain path"
// otherwise (a space would start another flag, `;` or a backquote another command).
Result<std::vector<std::string>> CandidateIncludePaths(const std::vector<std::string>& given);

// The `name` of a load_inline call. The engine's builds never use it, but PyTorch's
// writes it as -DTORCH_EXTENSION_NAME=<name> into the same shell line, and makes it a
// folder: a define's value like any other (plain: letters, digits, `_.+-`, starting
// with a letter, a digit or `_`, so no path either). Error "name '<name>' is not
// plain" otherwise.
Status CandidateExtensionName(const std::string& name);

}  // namespace kvault
