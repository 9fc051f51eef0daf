#pragma once
// `kvault corpus verify`: the vault's kernels verified again on this machine through
// the engine's batch runner (engine/batch.h RunBatch, as `kvault eval`), each result
// added to its record under this machine's hardware and toolchain (docs/corpus.md,
// "Verify").
//
// The results it adds are the vault's only verification (origin "engine"); an
// import's claim of any status is verified like a record without one.
//
// Resumable twice over: a record that already has an engine's result of this hardware
// and toolchain is skipped (unless force), and the attempts land in a scratch store
// (`<vault>.verify.db`) that RunBatch resumes from. task_error and infra_error are
// not the kernel's outcome: they add no result, and the next run tries again.
#include <atomic>
#include <functional>
#include <string>

#include "corpus/corpus_store.h"
#include "engine/batch.h"
#include "engine/options.h"
#include "store/store.h"

namespace kvault::corpus {

struct ReverifySettings {
  RecordFilter filter;       // which records; Default: every kernel record
  int jobs = 1;              // lanes
  int compile_jobs = -1;     // RunBatch's; Default: one per CPU core
  bool force = false;        // verify again records that have a result here
  std::string hardware;      // the hardware label; Default: MachineHardware(options)
  std::string scratch_db;    // RunBatch's store; Default: <vault>.verify.db
  const std::atomic<bool>* stop = nullptr;
};

struct ReverifySummary {
  int64_t selected = 0;      // kernel records the filter passed
  int64_t already = 0;       // skipped: a result of this hardware and toolchain exists
  int64_t unsupported = 0;   // skipped: no reference source, or a format or language this backend cannot run
  int64_t verified = 0;      // results added
  int64_t not_recorded = 0;  // task_error / infra_error, or not run (stopped)
  std::string hardware, toolchain;
  Json ToJson() const;
};

// This machine's device as results name it: the GPU's product name (nvidia-smi /
// rocm-smi) for cuda / hip, the CPU's model name for cpu; "<backend> device N" when
// the tool does not answer.
std::string MachineHardware(const EngineOptions& options);
// The compiler that builds candidates for the backend, with its version ("nvcc 12.4").
std::string MachineToolchain(const EngineOptions& options);

// An attempt of the attempt store as a verification result (hardware from the
// environment fingerprint's device, toolchain from its compilers).
VerificationResult ResultFromAttempt(const AttemptRecord& attempt);

Result<ReverifySummary> Reverify(CorpusStore& vault, const EngineOptions& options,
                                 const ReverifySettings& settings,
                                 const std::function<void(const EvalProgress&)>& progress);

}  // namespace kvault::corpus
