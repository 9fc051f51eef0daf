#include "agent/lane_evaluator.h"

#include <filesystem>

namespace kvault::agent {

LaneEvaluator::LaneEvaluator(EngineOptions options, std::string run, Store& store, int lanes)
    : run_(std::move(run)), pool_(std::move(options), store, {.lanes_per_device = lanes}) {}

LaneEvaluator::~LaneEvaluator() = default;

Result<AttemptRecord> LaneEvaluator::Evaluate(const TaskFile& task, const std::string& path) {
  LanePool::Lane& lane = pool_.Acquire();
  struct Releaser {
    LanePool& pool;
    LanePool::Lane& lane;
    ~Releaser() { pool.Release(lane); }
  } releaser{pool_, lane};
  const auto candidate = LoadCandidate(path);
  // Each generated candidate is a sample of its own, named by its label (iter1_0):
  // identical answers are distinct attempts.
  LaneAttempt a = pool_.Attempt(lane, {.run = run_, .task = task, .candidate = candidate, .candidate_path = path,
                                       .sample = std::filesystem::path(path).stem().string()});
  if (!a.store_error.empty()) return Error{"cannot write to the store: " + a.store_error};
  return std::move(a.record);
}

}  // namespace kvault::agent
