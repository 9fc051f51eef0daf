#pragma once
// Batch evaluation (`kvault eval`): many candidates over a suite, in parallel
// lanes, each lane a Verifier with its own workers. Every attempt is written to the
// store as soon as it ends, so an interrupted batch loses at most the attempts in
// flight, and a re-run skips what is recorded for the same sample and content
// (task_error and infra_error are retried: they are not the candidate's outcome).
// Identical candidates of two samples are two attempts (the compile cache builds
// them once).
#include <atomic>
#include <chrono>
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

// How long no attempt may end before RunBatch reports what each busy lane is doing
// (EvalProgress::stalled), and how often it reports again while none ends.
inline constexpr std::chrono::seconds kStallReport{60};

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
  std::chrono::milliseconds stall_report = kStallReport;  // 0: never
  WorkerFactory factory{};  // Default: worker processes (tests: scripted workers)
};

struct EvalProgress {
  size_t done = 0, total = 0;
  const AttemptRecord* last = nullptr;  // the attempt that just ended; null in a stall report
  bool skipped = false;                 // it was taken from the store
  // A stall report (last is null): no attempt has ended for stalled_s seconds; one line
  // per busy lane, "lane 2: relu <- s1.py: correctness for 55s (attempt 58s), waiting
  // 40s for the device gate (...)" (engine/lane_activity.h, Describe).
  std::vector<std::string> stalled{};
  double stalled_s = 0;
};

// Runs every job; returns one record per job, in job order (a job not run because
// of settings.stop has a record with an empty run). Error only for an infrastructure
// failure that stops the whole batch (no worker starts, the store cannot be written).
// `progress` is called after each attempt, and with a stall report whenever no attempt
// has ended for settings.stall_report; never by two threads at once.
Result<std::vector<AttemptRecord>> RunBatch(const std::vector<EvalJob>& jobs,
                                            const EngineOptions& options,
                                            const EvalSettings& settings, Store& store,
                                            const std::function<void(const EvalProgress&)>& progress);

}  // namespace kvault
