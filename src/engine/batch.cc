#include "engine/batch.h"

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "engine/compile_pool.h"
#include "engine/fingerprint.h"
#include "engine/inline_prebuild.h"
#include "engine/inline_record.h"
#include "engine/verifier.h"
#include "toolchain/build.h"

namespace kvault {
namespace {

std::string SampleOf(const EvalJob& job) {
  return job.sample.empty() ? std::filesystem::path(job.candidate_path).filename().string() : job.sample;
}

// The store's record of this attempt when a re-run should skip it (task_error and
// infra_error are retried: they are not the candidate's outcome).
std::optional<AttemptRecord> RecordedAttempt(Store& store, const EvalSettings& settings,
                                             const EngineOptions& options, const EvalJob& job,
                                             const Candidate& candidate, const std::string& arch) {
  auto found = store.FindSample(settings.run, job.task.name, SampleOf(job), candidate.hash,
                                std::string(ToString(options.backend)), arch);
  if (!found || !found->has_value()) return std::nullopt;
  auto status = OutcomeStatusFromString((*found)->status);
  if (!status || IsInfrastructure(*status)) return std::nullopt;
  return std::move(**found);
}

// Builds made ahead of the lanes: the compile pool and, feeding it, the noting of
// KernelBench files' load_inline calls. The noting goes first (declared last).
struct AheadBuilds {
  std::unique_ptr<CompilePool> pool;
  std::unique_ptr<InlinePrebuild> inline_calls;
};

// Queues the builds of every compiled candidate the lanes will verify, and the
// KernelBench files whose load_inline calls are to be noted and built, in job order,
// after their toolchain's one-time entries when there are KernelBench files,
// on settings.compile_jobs threads; no pool when there is nothing to build ahead or
// no pool is wanted. Anything that stops a request from being made here (no hello
// answer) is left to the lanes, which report it as they always did.
AheadBuilds StartAheadBuilds(const std::vector<EvalJob>& jobs, const EngineOptions& options,
                             const EvalSettings& settings, Store& store, Verifier& verifier) {
  int threads = settings.compile_jobs;
  if (threads < 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (threads == 0) return {};
  std::vector<BuildRequest> requests;
  std::vector<std::pair<Candidate, std::string>> inline_files;  // and their task files
  std::optional<Json> hello;
  for (const EvalJob& job : jobs) {
    auto candidate = LoadCandidate(job.candidate_path);
    if (!candidate || !(IsCompiledFormat(candidate->format) || CallsLoadInline(*candidate))) continue;
    if (!hello) {
      auto h = verifier.Hello();
      if (!h) return {};
      hello = *h;
    }
    const std::string arch = RecordArch(options, EnvironmentFingerprint(*hello));
    if (!settings.force && RecordedAttempt(store, settings, options, job, *candidate, arch)) continue;
    if (!IsCompiledFormat(candidate->format)) {
      inline_files.emplace_back(std::move(*candidate), job.task.path);
      continue;
    }
    auto request = CandidateBuildRequest(*candidate, options, *hello);
    if (!request) return {};
    requests.push_back(std::move(*request));
  }
  if (requests.empty() && inline_files.empty()) return {};
  AheadBuilds ahead;
  const int pool_threads = inline_files.empty() ? std::min<int>(threads, static_cast<int>(requests.size())) : threads;
  ahead.pool = std::make_unique<CompilePool>(pool_threads, BuildExtension);
  // A KernelBench file's first build waits for its record; an extension candidate's
  // starts at once and makes the object itself, so only the files need it made first.
  if (auto like = TypicalExtensionRequest(options, *hello); !inline_files.empty() && like)
    ahead.pool->Prepare(*like, options.timeouts.compile);
  for (const BuildRequest& r : requests) ahead.pool->Submit(r, options.timeouts.compile);
  if (!inline_files.empty()) {
    ahead.inline_calls = std::make_unique<InlinePrebuild>(options, *hello, *ahead.pool);
    for (const auto& [candidate, task_path] : inline_files) ahead.inline_calls->Submit(candidate, task_path);
  }
  return ahead;
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

  auto lane = [&](Verifier& verifier) {
    Json environment;  // filled once the lane's worker answered hello
    auto stopped = [&] { return settings.stop && settings.stop->load(); };
    for (size_t i = next++; i < jobs.size(); i = next++) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!fatal.empty() || stopped()) return;
      }
      const EvalJob& job = jobs[i];
      if (environment.is_null()) {
        auto hello = verifier.Hello();
        environment = EnvironmentFingerprint(hello ? *hello : Json(nullptr));
      }
      auto candidate = LoadCandidate(job.candidate_path);
      const std::string arch = RecordArch(options, environment);
      bool skipped = false;
      AttemptRecord rec;
      if (candidate && !settings.force) {
        if (auto found = RecordedAttempt(store, settings, options, job, *candidate, arch)) {
          rec = std::move(*found);
          skipped = true;
        }
      }
      if (!skipped) {
        Verification v = VerifyLoaded(verifier, job.task, candidate);
        if (stopped()) return;
        rec = MakeRecord(settings.run, job.task, candidate ? &*candidate : nullptr,
                         job.candidate_path, options, v, environment);
        rec.sample = SampleOf(job);
        if (auto st = store.Put(rec); !st) {
          std::lock_guard<std::mutex> lock(mu);
          fatal = "cannot write to the store: " + st.error();
          return;
        }
      }
      std::lock_guard<std::mutex> lock(mu);
      records[i] = std::move(rec);
      ++done;
      if (progress) progress(EvalProgress{done, jobs.size(), &records[i], skipped});
    }
  };

  const int lanes = std::max(1, std::min<int>(settings.jobs, static_cast<int>(jobs.size())));
  std::vector<std::unique_ptr<Verifier>> verifiers;
  for (int l = 0; l < lanes; ++l) verifiers.push_back(std::make_unique<Verifier>(options));
  // A worker that cannot start would fail every attempt as an infra_error: one
  // failure of the whole batch instead.
  if (auto hello = verifiers[0]->Hello(); !hello)
    return Error{"no worker could start on backend " + std::string(ToString(options.backend)) + ": " +
                 hello.error()};
  // Destroyed after the lanes are joined (declared first).
  AheadBuilds ahead = StartAheadBuilds(jobs, options, settings, store, *verifiers[0]);
  if (ahead.pool)
    for (auto& v : verifiers) v->SetBuilder(ahead.pool->Builder(BuildExtension));
  std::vector<std::thread> threads;
  for (int l = 1; l < lanes; ++l) threads.emplace_back(lane, std::ref(*verifiers[l]));
  lane(*verifiers[0]);
  for (auto& t : threads) t.join();
  if (!fatal.empty()) return Error{fatal};
  return records;
}

}  // namespace kvault
