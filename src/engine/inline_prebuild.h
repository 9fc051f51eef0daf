#pragma once
// InlinePrebuild: the load_inline calls of KernelBench candidates noted ahead of the
// lanes, and their builds queued on the compile pool, so that they compile on every
// core while the lanes verify, as extension-format candidates do (docs/toolchains.md,
// "load_inline candidates"). A file's calls are known only once it has run, so
// without it each lane noted and built its own candidate's calls, one build per lane
// at a time.
//
//   InlinePrebuild ahead(options, hello, pool);
//   for (auto& job : jobs) ahead.Submit(candidate, task_path);   // in job order
//
// Nothing it does is an outcome. The lane still notes the file itself, in its own
// worker, and builds exactly what its record says: a unit's text and flags name the
// cache entry, not the folder it was written to, so the lane finds the entry built,
// or waits on the cache's lock for the build in flight. A record that fails, hangs
// or notes nothing here only leaves the building to the lane, as before.
//
// The files run in workers of the CPU backend (no device context; the devices are
// hidden from them), sandboxed as candidate workers are, each discarded after one
// file, on kInlinePrebuildThreads threads (fewer when the pool has fewer) with a
// DeviceSession each. Thread-safe. The destructor
// drops queued files and waits for the ones being noted.
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "candidate/candidate.h"
#include "engine/compile_pool.h"
#include "engine/device_session.h"
#include "engine/options.h"
#include "util/files.h"
#include "util/json.h"

namespace kvault {

// Threads noting files ahead (each with its own workers), at most as many as the
// pool's: a record takes a fraction of a second, a build seconds, so two keep a pool
// of 16 compilers fed.
inline constexpr int kInlinePrebuildThreads = 2;

class InlinePrebuild {
 public:
  // `hello`: the lanes' hello answer (their device's arch and PyTorch's build
  // information name the builds). REQUIRES: `pool` outlives this.
  InlinePrebuild(const EngineOptions& options, Json hello, CompilePool& pool, WorkerFactory factory = {});
  ~InlinePrebuild();
  InlinePrebuild(const InlinePrebuild&) = delete;
  InlinePrebuild& operator=(const InlinePrebuild&) = delete;

  // Queues `candidate` (its file at candidate.path) when CallsLoadInline; `task_path`:
  // its task file, for a file whose calls are made by ModelNew's constructor.
  void Submit(const Candidate& candidate, const std::string& task_path);

  size_t noted() const;  // files done with so far (noted, whatever the record held, and queued)
  size_t queued_builds() const;  // builds handed to the pool so far

 private:
  struct Item {
    std::string candidate_path, task_path;
    std::string candidate_hash;  // Candidate::hash (InlineCallsKey)
  };
  void Work();
  // Notes one file in `session`'s candidate worker and queues its calls' builds.
  void Note(DeviceSession& session, const Item& item, const std::string& folder);

  const EngineOptions options_;
  const Json hello_;
  CompilePool& pool_;
  WorkerFactory factory_;
  std::optional<TempDir> sources_;  // the units' sources, read by the pool's builds
  mutable std::mutex mu_;
  std::condition_variable queued_;
  std::deque<Item> queue_;
  bool stopping_ = false;
  size_t noted_ = 0, queued_builds_ = 0, next_file_ = 0;
  std::vector<std::thread> threads_;
};

}  // namespace kvault
