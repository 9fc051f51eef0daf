#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/interrupt.h"
#include "cli/report.h"
#include "engine/batch.h"
#include "engine/fingerprint.h"
#include "engine/verifier.h"
#include "engine/worker_sandbox.h"
#include "util/files.h"

namespace kvault::cli {

int RunVerify(const VerifyFlags& flags) {
  InterruptGuard interrupt;  // before any thread or child starts
  auto misuse = [](const std::string& why) {
    std::cerr << "kvault verify: " << why << "\n";
    return kExitMisuse;
  };
  if (!flags.run.empty() && !flags.db)
    return misuse("--run names the run in a store; give --db PATH too (or drop --run)");
  auto task = LoadTaskFile(flags.task);
  if (!task) return misuse(task.error());
  // A file that is not there is the command's mistake, not a candidate that fails.
  if (auto readable = ReadFile(flags.candidate); !readable)
    return misuse("cannot read candidate " + flags.candidate + ": " + readable.error());
  // The store is opened before verifying, so a bad --db costs nothing.
  std::unique_ptr<Store> store;
  if (flags.db) {
    auto opened = Store::Open(ResolveDbPath(flags.db));
    if (!opened) {
      std::cerr << "kvault verify: " << opened.error() << " (nothing was verified)\n";
      return kExitInfra;
    }
    store = std::move(*opened);
  }
  int options_exit = kExitOk;
  // An explicit GPU backend is checked by the verifier's own workers, which open it
  // first thing, not by one more worker started before them (PyTorch's import).
  auto options = MakeOptions(flags.common, flags.compile_only, &options_exit, BackendCheck::kByWorkers);
  if (!options) return options_exit;
  if (flags.db) HideStoreFromWorkers(*options, ResolveDbPath(flags.db));
  Verifier verifier(*options);
  // Where the time goes, as it goes: a line per stage on stderr (redrawn in place on
  // a terminal, cleared at the end).
  const bool terminal = isatty(STDERR_FILENO);
  const auto started = std::chrono::steady_clock::now();
  verifier.SetStageListener([&](const char* stage) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    char line[96];
    std::snprintf(line, sizeof line, "kvault verify: %s (%.1f s elapsed)", stage, s);
    std::cerr << (terminal ? "\r\033[K" : "") << line << (terminal ? "" : "\n") << std::flush;
  });
  auto candidate = LoadCandidate(flags.candidate);
  Verification v = VerifyLoaded(verifier, *task, candidate);
  if (terminal) std::cerr << "\r\033[K" << std::flush;
  if (interrupt.stopped()) {
    std::cerr << "kvault verify: interrupted; nothing recorded\n";
    return kExitInterrupted;
  }
  // A verification the task's side could not run may be a backend this PyTorch cannot
  // run at all: then it is misuse, as MakeOptions would have said, and nothing is kept.
  if ((v.status == OutcomeStatus::kInfraError || v.status == OutcomeStatus::kTaskError) &&
      ReportBackendUnusable(*options))
    return kExitMisuse;
  if (store) {
    auto hello = verifier.Hello();
    AttemptRecord rec = MakeRecord(flags.run.empty() ? kDefaultRun : flags.run, *task,
                                   candidate ? &*candidate : nullptr, flags.candidate, *options, v,
                                   EnvironmentFingerprint(hello ? *hello : Json(nullptr)));
    rec.sample = flags.candidate;  // each file verified into a run is a sample of its own
    if (auto st = store->Put(rec); !st) {
      std::cerr << "kvault verify: cannot record: " << st.error() << "\n";
      return kExitInfra;
    }
  }
  if (flags.common.json) {
    Json j = v.ToJson();
    j["task"] = task->name;
    j["candidate"] = flags.candidate;
    j["backend"] = std::string(ToString(options->backend));
    std::cout << j.dump() << std::endl;
  } else {
    PrintVerification(std::cout, task->name, flags.candidate, v);
  }
  if (v.status == OutcomeStatus::kInfraError) {
    std::cerr << "kvault verify: infrastructure failure, not the candidate's: " << v.message << "\n";
    return kExitInfra;
  }
  if (flags.fail_on_reject) {
    const OutcomeStatus wanted = flags.compile_only ? OutcomeStatus::kCompiled : OutcomeStatus::kPassed;
    if (v.status != wanted) return kExitRejected;
  }
  return kExitOk;
}

}  // namespace kvault::cli
