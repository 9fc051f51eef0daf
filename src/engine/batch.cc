#include "engine/batch.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

#include "engine/candidate_build.h"
#include "engine/fingerprint.h"
#include "engine/inline_record.h"
#include "engine/lane_activity.h"
#include "engine/verifier.h"

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
  std::mutex mu;  // guards done, fatal, last_end, finished and progress calls
  std::condition_variable finishing;
  size_t done = 0;
  std::string fatal;
  using Clock = std::chrono::steady_clock;
  Clock::time_point last_end = Clock::now();
  bool finished = false;

  const int lanes = std::max(1, std::min<int>(settings.jobs, static_cast<int>(jobs.size())));
  // While the workers import PyTorch: the first lane's fingerprint then waits for none.
  const std::future<void> toolchains = DiscoverToolchainsAhead();
  LanePool pool(options, store, {.lanes_per_device = lanes, .factory = settings.factory});
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
      last_end = Clock::now();
      if (progress) progress(EvalProgress{done, jobs.size(), &records[i], a.from_store, {}, 0});
    }
  };

  // Every lane's workers start at once (each imports PyTorch: seconds on a GPU host),
  // the other lanes' beside the first one's; they take jobs only once the first lane's
  // workers answered and the builds ahead began.
  enum class Go { kWait, kRun, kAbandon };
  Go go = Go::kWait;  // guarded by mu
  std::condition_variable going;
  std::vector<std::thread> threads;
  for (size_t l = 1; l < pool.size(); ++l)
    threads.emplace_back([&, l] {
      (void)pool.Start(pool.lane(l));  // a lane whose workers do not start records infra_error attempts
      {
        std::unique_lock<std::mutex> lock(mu);
        going.wait(lock, [&] { return go != Go::kWait; });
        if (go == Go::kAbandon) return;
      }
      lane(pool.lane(l));
    });
  auto release_lanes = [&](Go what) {
    {
      std::lock_guard<std::mutex> lock(mu);
      go = what;
    }
    going.notify_all();
  };
  // A worker that cannot start would fail every attempt as an infra_error: one
  // failure of the whole batch instead.
  if (auto hello = pool.Start(pool.lane(0)); !hello) {
    release_lanes(Go::kAbandon);
    for (auto& t : threads) t.join();
    return Error{"no worker could start on backend " + std::string(ToString(options.backend)) + ": " +
                 hello.error()};
  }
  pool.StartAheadBuilds(settings.compile_jobs, AheadOfLanes(jobs, settings, pool), LanePool::Ahead::kKnownOnly);
  release_lanes(Go::kRun);
  // While no attempt ends, what each busy lane is doing, now and then: a batch that
  // stalls says on what (a lease, the gate, a long run) instead of going silent.
  auto report_stalls = [&] {
    const auto every = settings.stall_report;
    std::unique_lock<std::mutex> lock(mu);
    Clock::time_point next = last_end + every;
    while (!finishing.wait_until(lock, next, [&] { return finished; })) {
      const Clock::time_point now = Clock::now();
      if (now - last_end < every) {
        next = last_end + every;
        continue;
      }
      EvalProgress stall;
      stall.done = done;
      stall.total = jobs.size();
      stall.stalled_s = std::chrono::duration<double>(now - last_end).count();
      for (size_t l = 0; l < pool.size(); ++l) {
        const LaneActivity::Now what = pool.lane(l).verifier->activity().Read();
        if (what.busy) stall.stalled.push_back("lane " + std::to_string(l) + ": " + Describe(what));
      }
      if (!stall.stalled.empty()) progress(stall);
      next = now + every;
    }
  };
  std::thread reporter;
  if (progress && settings.stall_report.count() > 0) reporter = std::thread(report_stalls);
  lane(pool.lane(0));
  for (auto& t : threads) t.join();
  if (reporter.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu);
      finished = true;
    }
    finishing.notify_all();
    reporter.join();
  }
  if (!fatal.empty()) return Error{fatal};
  return records;
}

}  // namespace kvault
