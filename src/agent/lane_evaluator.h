#pragma once
// The production Evaluator: the engine's lane pool (engine/lane_pool.h) shared by
// every task of a `kvault gen` run. Each verified candidate is written to the
// attempts table under the run's name; a candidate the pool's reuse rule finds
// recorded (same content, sample, language, backend, arch and policy; verified by
// this store's engine; not task_error or infra_error) is taken from the store
// instead of being verified again.
// Thread-safe: Evaluate blocks until a lane is free.
#include <string>

#include "agent/loop.h"
#include "engine/lane_pool.h"
#include "engine/options.h"

namespace kvault::agent {

class LaneEvaluator : public Evaluator {
 public:
  LaneEvaluator(EngineOptions options, std::string run, Store& store, int lanes);
  ~LaneEvaluator() override;
  Result<AttemptRecord> Evaluate(const TaskFile& task, const std::string& path) override;

 private:
  const std::string run_;
  LanePool pool_;
};

}  // namespace kvault::agent
