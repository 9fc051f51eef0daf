#pragma once
// The production Evaluator: a pool of verification lanes (one Verifier each, with
// its own workers) shared by every task of a `kvault gen` run. Each verified
// candidate is written to the attempts table under the run's name; a candidate
// already recorded there (same task, hash, backend, arch; not task_error or
// infra_error) is taken from the store instead of being verified again.
// Thread-safe: Evaluate blocks until a lane is free.
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "agent/loop.h"
#include "engine/options.h"
#include "engine/verifier.h"

namespace kvault::agent {

class LaneEvaluator : public Evaluator {
 public:
  LaneEvaluator(EngineOptions options, std::string run, Store& store, int lanes);
  ~LaneEvaluator() override;
  Result<AttemptRecord> Evaluate(const TaskFile& task, const std::string& path) override;

 private:
  struct Lane {
    std::unique_ptr<Verifier> verifier;  // created on first use
    Json environment;                    // fingerprint, once the lane's worker answered
  };
  Lane* Acquire();
  void Release(Lane* lane);

  const EngineOptions options_;
  const std::string run_;
  Store& store_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::vector<Lane*> free_;
};

}  // namespace kvault::agent
