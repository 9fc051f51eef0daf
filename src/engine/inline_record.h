#pragma once
// Noting a KernelBench file's load_inline calls (docs/toolchains.md, "load_inline
// candidates"), the one way both a lane (Verifier::BuildInlineModules) and the
// builds made ahead of the lanes (InlinePrebuild) do it, so both name the same
// translation units and so the same compile-cache entries.
#include <chrono>
#include <optional>
#include <string>

#include "candidate/candidate.h"
#include "candidate/inline_unit.h"
#include "toolchain/backend.h"
#include "util/json.h"
#include "worker/worker.h"

namespace kvault {

// Whether the engine notes and builds `c`'s load_inline calls: a KernelBench file
// that names load_inline.
bool CallsLoadInline(const Candidate& c);

struct InlineRecord {
  WorkerReply file;                        // the file run alone
  std::optional<WorkerReply> constructed;  // again with ModelNew constructed, when asked
  Json calls;                              // the calls noted: an array, or null when `file` failed
};

// Runs the file in `w` (record_inline): first alone, since what its import does it
// does when loaded too; then, when it ran to its end without a call, again with
// ModelNew constructed (and called once when still nothing was noted) for calls made
// there. A file that calls at import is not constructed. The worker has run the
// candidate's code afterwards and must not serve it again.
InlineRecord RecordInlineCalls(WorkerConnection& w, const std::string& candidate_path,
                               const std::string& task_path, std::chrono::milliseconds timeout);

// What a record noted of a file that ran (its reply ok): the calls, and why
// constructing ModelNew failed when it did (the calls are then left to PyTorch).
struct NotedInlineCalls {
  Json calls;
  std::string construct_failed;
};

// The key of a file's noted calls in the cache kind "inline_calls" (docs/cache.md):
// the candidate's and the task's bytes, the worker's software (protocol, PyTorch,
// Python, its source) and the device it ran beside, so the same file is noted once
// and verified again without being run to be noted (a warm run spends nothing on
// record_inline). A file whose calls vary from run to run gains nothing from this
// but loses nothing either: a call whose digest was not built runs PyTorch's own
// load_inline in the worker.
std::string InlineCallsKey(const std::string& candidate_hash, const std::string& task_hash, const Json& hello);
std::optional<NotedInlineCalls> LookupInlineCalls(const std::string& cache_dir, const std::string& key);
// Keeps `noted` under `key`; a failure to keep it costs only a record next time.
void KeepInlineCalls(const std::string& cache_dir, const std::string& key, const NotedInlineCalls& noted);

// The unit of `call` (InlineUnitFor) when the engine builds it on `backend`; else why
// not (the call is then left to PyTorch's own load_inline).
Result<InlineUnit> BuildableInlineUnit(const Json& call, Backend backend);

// The extension-format source `unit` (call `index` of a file) is built from, at
// `folder`/inline_<index>.cu or .cpp; its text is written there by the caller.
Candidate InlineUnitSource(const InlineUnit& unit, const std::string& folder, size_t index);

}  // namespace kvault
