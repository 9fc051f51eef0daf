#pragma once
// Batch evaluation (`kvault eval`): many candidates over a suite, in parallel
// lanes, each lane a Verifier with its own workers. Every attempt is written to the
// store as soon as it ends, so an interrupted batch loses at most the attempts in
// flight, and a re-run skips what is recorded for the same sample and content
// (task_error and infra_error are retried: they are not the candidate's outcome).
// Identical candidates of two samples are two attempts (the compile cache builds
// them once).
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "candidate/candidate.h"
#include "engine/lane_pool.h"
#include "engine/options.h"
#include "engine/verification.h"
#include "store/store.h"
#include "task/task_file.h"

namespace kvault {

struct EvalJob {
  TaskFile task;
  std::string candidate_path;
  // The sample this candidate is (AttemptRecord::sample); Default: the file's name.
  std::string sample;
};

struct EvalSettings {
  std::string run = "default";
  int jobs = 1;        // lanes; Default: 1
  // Threads that build compiled candidates ahead of the lanes (engine/compile_pool.h).
  // Default: -1 = one per CPU core; 0 = none, each lane builds as it goes.
  int compile_jobs = -1;
  bool force = false;  // re-verify even when the store has a record
  // Set (by a signal): lanes take no further job, and an attempt that ends after it
  // is not recorded (its children were stopped; it did not fail by itself).
  const std::atomic<bool>* stop = nullptr;
};

struct EvalProgress {
  size_t done = 0, total = 0;
  const AttemptRecord* last = nullptr;  // the attempt that just ended
  bool skipped = false;                 // it was taken from the store
};

// Runs every job; returns one record per job, in job order (a job not run because
// of settings.stop has a record with an empty run). Error only for an infrastructure
// failure that stops the whole batch (no worker starts, the store cannot be written).
Result<std::vector<AttemptRecord>> RunBatch(const std::vector<EvalJob>& jobs,
                                            const EngineOptions& options,
                                            const EvalSettings& settings, Store& store,
                                            const std::function<void(const EvalProgress&)>& progress);

}  // namespace kvault
