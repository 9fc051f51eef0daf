#pragma once
// CompilePool: builds candidates' shared objects on CPU threads ahead of the device
// lanes of `kvault eval`, so compiling overlaps with verifying. A lane takes the
// pool's result for exactly the request it would have built itself (same outcome:
// a compile error or timeout is the candidate's, an Error is an infra_error); a
// request the pool never saw is built by the lane as before.
//
//   CompilePool pool(nproc, BuildExtension);
//   pool.Prepare(like, timeout);                                 // the one-time entries first
//   for (auto& req : requests) pool.Submit(req, timeout);       // in job order
//   verifier.SetBuilder(pool.Builder(BuildExtension));           // lanes take results
//
// Thread-safe. The destructor drops queued requests and waits for running builds.
// Once the process is stopping (util/child_process.h: StopAll), a job a thread takes
// is not run: a Prepare is dropped, a build's result is an Error.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/candidate_build.h"
#include "toolchain/build.h"

namespace kvault {

// Makes the one-time entries of a toolchain (PrepareExtensionBuilds); tests substitute fakes.
using PrepareFunction = std::function<Status(const BuildRequest& like, std::chrono::milliseconds timeout)>;

class CompilePool {
 public:
  // REQUIRES: threads >= 1.
  CompilePool(int threads, BuildFunction build, PrepareFunction prepare = PrepareExtensionBuilds);
  ~CompilePool();
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;

  // Whether a finished build's result waits for a Take (kTaken) or is dropped at once
  // (kNone: a build made only to fill the compile cache, e.g. InlinePrebuild's, whose
  // requests nobody takes; a long-lived pool would keep them for ever).
  enum class Claim { kTaken, kNone };

  // Queues a build (FIFO). A request already submitted is not queued again.
  void Submit(const BuildRequest& request, std::chrono::milliseconds timeout, Claim claim = Claim::kTaken);

  // Makes the one-time entries that builds like `like` use (the lite extension build's
  // object: about 20-30 s, once per toolchain) on a pool thread, ahead of every queued
  // build, so that it runs while the lanes start and note their first files instead of
  // when the first candidate's build asks for it. Nobody waits for it: a build that
  // needs the entry waits on its lock, or makes it itself if this failed.
  void Prepare(const BuildRequest& like, std::chrono::milliseconds timeout);

  // The result of a submitted request, waiting for it to finish; nullopt when it was
  // never submitted, was taken already (each result is handed out once) or was
  // dropped by the destructor.
  std::optional<Result<BuildResult>> Take(const BuildRequest& request);

  // A BuildFunction for lanes: the pool's result when it has the request, else
  // `fallback`.
  BuildFunction Builder(BuildFunction fallback);

  size_t built() const;  // builds finished by the pool so far
  int threads() const { return static_cast<int>(threads_.size()); }

 private:
  struct Job {
    BuildRequest request;
    Claim claim = Claim::kTaken;
    bool prepare = false;  // Prepare's: no build, no result
    std::chrono::milliseconds timeout{0};
    bool started = false, finished = false;
    std::optional<Result<BuildResult>> result;
  };
  // Queues `job` under `id` (at the head when `ahead`) unless the pool stops or has it.
  void Enqueue(const std::string& id, std::shared_ptr<Job> job, bool ahead);
  void Work();

  BuildFunction build_;
  PrepareFunction prepare_;
  mutable std::mutex mu_;
  std::condition_variable queued_, finished_;
  std::deque<std::string> queue_;                      // identities, in order
  std::map<std::string, std::shared_ptr<Job>> jobs_;  // by identity
  bool stopping_ = false;
  size_t built_ = 0;
  std::vector<std::thread> threads_;
};

}  // namespace kvault
