#include "engine/batch.h"

#include <atomic>
#include <filesystem>
#include <mutex>
#include <thread>

#include "engine/candidate_build.h"
#include "engine/inline_record.h"

namespace kvault {
namespace {

std::string SampleOf(const EvalJob& job) {
  return job.sample.empty() ? std::filesystem::path(job.candidate_path).filename().string() : job.sample;
}

// What the lanes will build: every compiled candidate and KernelBench file calling
// load_inline that the store does not answer, in job order, with its task file's path.
std::vector<std::pair<Candidate, std::string>> AheadOfLanes(const std::vector<EvalJob>& jobs,
                                                            const EvalSettings& settings, LanePool& pool) {
  std::vector<std::pair<Candidate, std::string>> known;
  for (const EvalJob& job : jobs) {
    auto candidate = LoadCandidate(job.candidate_path);
    if (!candidate || !(IsCompiledFormat(candidate->format) || CallsLoadInline(*candidate))) continue;
    // Without a lane the task's own policy is known only for tasks described already:
    // an unknown one is built ahead (a stored one finds its build in the compile cache).
    if (pool.Stored({.run = settings.run, .task = job.task, .candidate = candidate,
                     .candidate_path = job.candidate_path, .sample = SampleOf(job), .force = settings.force}))
      continue;
    known.emplace_back(std::move(*candidate), job.task.path);
  }
  return known;
}

}  // namespace

Result<std::vector<AttemptRecord>> RunBatch(const std::vector<EvalJob>& jobs,
                                            const EngineOptions& options,
                                            const EvalSettings& settings, Store& store,
                                            const std::function<void(const EvalProgress&)>& progress) {
  std::vector<AttemptRecord> records(jobs.size());
  std::atomic<size_t> next{0};
  std::mutex mu;  // guards done, fatal and progress calls
  size_t done = 0;
  std::string fatal;

  const int lanes = std::max(1, std::min<int>(settings.jobs, static_cast<int>(jobs.size())));
  LanePool pool(options, store, {.lanes_per_device = lanes});
  auto stopped = [&] { return settings.stop && settings.stop->load(); };
  auto lane = [&](LanePool::Lane& lane) {
    for (size_t i = next++; i < jobs.size(); i = next++) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!fatal.empty() || stopped()) return;
      }
      const EvalJob& job = jobs[i];
      const auto candidate = LoadCandidate(job.candidate_path);
      LaneAttempt a = pool.Attempt(lane,
                                   {.run = settings.run, .task = job.task, .candidate = candidate,
                                    .candidate_path = job.candidate_path, .sample = SampleOf(job),
                                    .force = settings.force},
                                   [&] { return !stopped(); });
      if (a.dropped) return;
      std::lock_guard<std::mutex> lock(mu);
      if (!a.store_error.empty()) {
        fatal = "cannot write to the store: " + a.store_error;
        return;
      }
      records[i] = std::move(a.record);
      ++done;
      if (progress) progress(EvalProgress{done, jobs.size(), &records[i], a.from_store});
    }
  };

  // A worker that cannot start would fail every attempt as an infra_error: one
  // failure of the whole batch instead.
  if (auto hello = pool.Start(pool.lane(0)); !hello)
    return Error{"no worker could start on backend " + std::string(ToString(options.backend)) + ": " +
                 hello.error()};
  pool.StartAheadBuilds(settings.compile_jobs, AheadOfLanes(jobs, settings, pool), LanePool::Ahead::kKnownOnly);
  std::vector<std::thread> threads;
  for (size_t l = 1; l < pool.size(); ++l) threads.emplace_back(lane, std::ref(pool.lane(l)));
  lane(pool.lane(0));
  for (auto& t : threads) t.join();
  if (!fatal.empty()) return Error{fatal};
  return records;
}

}  // namespace kvault
