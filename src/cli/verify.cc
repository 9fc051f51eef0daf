#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/report.h"
#include "engine/batch.h"
#include "engine/fingerprint.h"
#include "engine/verifier.h"
#include "engine/worker_sandbox.h"

namespace kvault::cli {

int RunVerify(const VerifyFlags& flags) {
  auto task = LoadTaskFile(flags.task);
  if (!task) {
    std::cerr << "kvault verify: " << task.error() << "\n";
    return kExitMisuse;
  }
  auto options = MakeOptions(flags.common, flags.compile_only);
  if (!options) return kExitMisuse;
  if (flags.db) HideStoreFromWorkers(*options, ResolveDbPath(flags.db));
  Verifier verifier(*options);
  auto candidate = LoadCandidate(flags.candidate);
  Verification v = VerifyLoaded(verifier, *task, candidate);
  if (flags.db) {
    auto store = Store::Open(ResolveDbPath(flags.db));
    if (!store) {
      std::cerr << "kvault verify: " << store.error() << "\n";
      return kExitInfra;
    }
    auto hello = verifier.Hello();
    AttemptRecord rec = MakeRecord(flags.run.empty() ? "verify" : flags.run, *task,
                                   candidate ? &*candidate : nullptr, flags.candidate, *options, v,
                                   EnvironmentFingerprint(hello ? *hello : Json(nullptr)));
    if (auto st = (*store)->Put(rec); !st) {
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
  return v.status == OutcomeStatus::kInfraError ? kExitInfra : kExitOk;
}

}  // namespace kvault::cli
