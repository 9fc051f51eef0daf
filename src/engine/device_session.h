#pragma once
// The worker processes of one device: a reference worker (runs only trusted task
// code) and a candidate worker (runs candidates, and times them against the
// reference). Workers start lazily, answer `hello` first, and are replaced after
// any failure. With EngineOptions::zygote, candidate workers are forked from a
// zygote (worker/zygote.h). The zygote's process starts beside the session's first
// reference worker, so that its imports overlap that worker's start and the task's
// describe; the first candidate worker then waits only for what is left of them
// (not with --compile-only, where a candidate worker is rare: the first one wanted
// starts it). A session that ends first kills it without waiting for it. When the
// zygote cannot start or fails, the session says so once on stderr and starts
// candidate workers from scratch; a fork that finds the device's memory full (its
// context could not be made) fails only its own start, and the zygote stays.
// While a zygote-forked candidate worker works, the next one is forked and greeted
// on a background thread (the spare), so that a lane's next candidate does not wait
// for a fork and a device context. Workers never serve two candidates. The cost is
// one more idle worker per lane (on a GPU, with its device context and its memory).
// Not thread-safe: one DeviceSession per lane.
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/options.h"
#include "engine/worker_outcome.h"
#include "util/files.h"
#include "util/process_tree.h"
#include "util/json.h"
#include "util/result.h"
#include "worker/worker.h"
#include "worker/zygote.h"

namespace kvault {

enum class WorkerRole { kReference, kCandidate };

// Starts a worker process; tests substitute fakes.
using WorkerFactory =
    std::function<Result<std::unique_ptr<WorkerConnection>>(const WorkerOptions&)>;
WorkerFactory ProcessWorkerFactory();
// Starts a zygote process without waiting for it to be ready (Zygote::Spawn: the
// options and the start timeout); tests substitute their own.
using ZygoteFactory =
    std::function<Result<std::unique_ptr<Zygote>>(const WorkerOptions&, std::chrono::milliseconds)>;

class DeviceSession {
 public:
  // `hello_backend` is the backend the workers open ("cpu" for --compile-only, where
  // only build information is needed). Candidate workers come from a zygote (with
  // EngineOptions::zygote) when `factory` is empty (then real worker processes and
  // Zygote::Spawn) or `zygotes` is given.
  DeviceSession(const EngineOptions& options, std::string hello_backend, WorkerFactory factory,
                ZygoteFactory zygotes = {});
  ~DeviceSession();

  // The running worker of `role`, started and greeted if needed. Error: the worker
  // could not start or refused the backend (an infrastructure failure).
  Result<WorkerConnection*> Get(WorkerRole role);
  // A request to the reference worker (trusted code only), started first if needed:
  // its reply, or its failure worded for `what` and judged task's or engine's
  // (worker_outcome.h, JudgeTrustedFailure; a worker that cannot start is
  // TrustedStartFailure); a broken worker is discarded. Every reference call goes here.
  ReferenceReply AskReference(const Json& request, std::chrono::milliseconds timeout, const std::string& what);
  // Kills the worker of `role` and removes its folder; the next Get starts a fresh one.
  void Discard(WorkerRole role);
  // The folder of the worker of `role` (its working directory, the one folder on disk
  // it may write; a candidate worker writes its outputs there, and no other candidate
  // worker can reach it); empty when there is none (the sandbox is off).
  const std::string& Folder(WorkerRole role) const { return folders_[static_cast<int>(role)]; }
  // Where the candidate's worker writes its outputs: its own folder, which no other
  // worker can reach; the reference's files stay in the verification's `scratch`,
  // which candidate workers cannot see (docs/sandbox.md). `scratch` when the worker has
  // no folder of its own (the sandbox is off).
  const std::string& CandidateFolder(const std::string& scratch) const {
    const std::string& own = Folder(WorkerRole::kCandidate);
    return own.empty() ? scratch : own;
  }
  // The hello answer (device and build information), starting a worker if needed.
  Result<Json> Hello();
  // Stops every process of the candidate's side until the result is destroyed: the
  // candidate worker and everything it started (with the zygote: every process the
  // zygote forked, the spare included), so nothing the candidate left running takes
  // the CPU from the reference while it is timed (docs/timing.md, "What the engine
  // trusts"). Null when there is no candidate worker.
  std::unique_ptr<FrozenTree> FreezeCandidate();
  // The processes of a side whose CPU time the engine reads from outside
  // (util/process_cpu.h; docs/timing.md, "What the engine trusts"): the candidate's are
  // those FreezeCandidate stops; the reference's, its worker and what it started. Empty
  // when there is no such worker.
  std::vector<pid_t> CandidateProcesses() const;
  std::vector<pid_t> ReferenceProcesses() const;
  // Sets `name`=`value` in the environment of every worker started from now on
  // (InlinePrebuild hides the devices from its workers).
  void SetWorkerEnv(std::string name, std::string value) {
    worker_env_.emplace_back(std::move(name), std::move(value));
  }
  // Once the reference worker has answered hello: starts the first candidate worker
  // (a fork of the zygote, once it is ready, and its hello) in the background, so that
  // it is ready when the candidate's build is done. No-op without the zygote or when
  // one runs or is pending.
  void Prestart();
  // Starts and greets a reference worker in the background, for the next Get of the
  // reference role after the running one is discarded: a lane that gives each task a
  // reference worker of its own (ReferenceWorkers::kPerTask) starts the next one while
  // it verifies. It has run no task's code. No-op while one is pending or ready, or
  // before the session's first hello. The cost: one more idle worker per lane.
  void PrestartReference();

 private:
  // A worker started from scratch and greeted, with its private folder.
  struct Started {
    std::unique_ptr<WorkerConnection> worker;
    std::optional<TempDir> private_dir;
  };
  Result<Started> StartWorker(WorkerRole role);
  WorkerOptions MakeWorkerOptions() const;
  // Starts the zygote's process beside the session's first reference worker (see the
  // top); a failure is left to the first ForkCandidate, which tries again and says why.
  void SpawnZygoteEarly();
  // Starts the zygote's process in the candidate worker's sandbox, without waiting.
  Status SpawnZygote();
  // A candidate worker forked by the zygote (started first if needed, waited for until
  // it is ready); Error when the zygote is unusable (the caller then starts one from scratch).
  // `folder` gets the worker's folder (empty when the zygote has none of its own).
  Result<std::unique_ptr<WorkerConnection>> ForkCandidate(std::string* folder);
  // Sends `hello` (with the environment on the session's first); the worker, or Error.
  Result<std::unique_ptr<WorkerConnection>> Greet(std::unique_ptr<WorkerConnection> w);
  // One `hello` to `w`, asking for the environment or not: the answer, or why the
  // worker cannot be used (it failed, refused the backend or speaks another version).
  Result<Json> AskHello(WorkerConnection& w, bool environment);
  // Starts forking and greeting the spare candidate worker in the background.
  void StartSpare();
  void LaunchSpare();  // the background fork and hello behind StartSpare and Prestart
  // The spare, once it is ready; nullptr when there is none or it failed (the
  // caller then forks one the usual way, which reports any failure).
  std::unique_ptr<WorkerConnection> TakeSpare();

  EngineOptions options_;
  std::string hello_backend_;
  WorkerFactory factory_;
  ZygoteFactory zygotes_;
  std::vector<std::pair<std::string, std::string>> worker_env_;  // SetWorkerEnv
  std::optional<TempDir> private_dirs_[2];  // each sandboxed worker's HOME; outlives it
  std::unique_ptr<WorkerConnection> workers_[2];
  std::string folders_[2];   // Folder(role)
  std::string spare_folder_;  // the spare's, set by the background thread
  int forks_ = 0;             // names the forked workers' folders
  bool use_zygote_ = false;
  bool candidate_forked_ = false;  // the candidate worker came from the zygote
  std::unique_ptr<Zygote> zygote_;  // possibly still importing (Zygote::ready)
  std::optional<TempDir> zygote_dir_;  // the zygote's private folder; its workers' below
  Json hello_;
  // Only the background thread touches zygote_ while the spare is pending: every
  // other use of it waits for the spare first (TakeSpare).
  std::future<Result<std::unique_ptr<WorkerConnection>>> spare_;
  // PrestartReference's worker; only its thread touches factory_ while it is pending.
  std::future<Result<Started>> spare_reference_;
};

}  // namespace kvault
