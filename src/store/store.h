#pragma once
// The attempt store: one SQLite row per verification attempt (docs/store.md).
//
//   auto store = Store::Open(ResolveDbPath(flags.db));
//   if (!store) return Error{store.error()};
//   AttemptRecord rec;  rec.run = "r1";  rec.task = "relu";  ...
//   if (Status s = (*store)->Put(rec); !s) return Error{s.error()};
//   auto rows = (*store)->ListRun("r1");
//
// Thread safety: every Store method may be called from any thread. A Store holds one
// connection guarded by a mutex, so calls on one Store run one at a time. Several
// Stores (in one process or many) may open the same file: the database is in WAL
// mode, readers do not block the writer, and a writer waits up to kBusyTimeoutMs for
// another writer's lock instead of failing.
//
// Errors: Open and every call return an Error (never crash or throw) for an
// unreadable, corrupt or non-SQLite file, a foreign SQLite database, a database
// written by a newer schema version, or a failed statement. Messages name the path.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "util/json.h"
#include "util/result.h"

namespace kvault {
namespace sqlite {
class Statement;
}  // namespace sqlite

// One verification attempt. Key: (run, task, sample, candidate_hash, backend, arch).
struct AttemptRecord {
  int64_t id = 0;  // set by Store::Put; ignored on input
  std::string run;
  std::string task;
  std::string task_hash;
  std::string candidate_hash;
  std::string candidate_path;
  std::string candidate_source;
  std::string format;    // extension | kernelbench | ...
  std::string language;  // e.g. hip, cuda, triton
  std::string backend;
  std::string arch;
  std::string status;  // an OutcomeStatus name (docs/outcomes.md)
  bool compiled = false;
  bool correct = false;
  std::optional<double> speedup;  // NaN is stored as NULL and reads back as nullopt
  std::optional<double> reference_ms;
  std::optional<double> candidate_ms;
  std::optional<double> reward;  // null for task_error / infra_error (docs/reward.md)
  std::string message;
  std::string diagnostics;  // bounded by the engine
  std::string policy;       // applied: any | custom_kernel; empty before it was known
  // Which sample of the task this is: the candidate's name in an eval folder, its
  // label in a gen run (iter1_0); "" where content alone identifies an attempt
  // (kvault serve: identical candidates verify once). Samples of a task are ordered
  // by this name, numbers compared as numbers (sample_2 before sample_10).
  std::string sample;
  // Where the verdict comes from: "" when an engine writing this store verified it,
  // "imported" for a row `kvault import` copied in (a claim, never answered as a
  // verification: FindVerified skips it).
  std::string origin;
  // Stored as compact JSON text; invalid UTF-8 inside strings is stored as U+FFFD.
  Json cases = Json::array();         // per-case errors and timings
  Json environment = Json::object();  // environment fingerprint
  std::string engine_version;
  double seconds = 0;      // wall time of the attempt
  std::string created_at;  // ISO-8601 UTC ("2025-01-31T12:00:00.000Z"), set by Put
};

// An attempt's content, as the engine's lanes identify it (engine/lane_pool.h): the
// task's and candidate's bytes (by hash, whatever name or label they came with), how
// the candidate is saved (its language), where and under which policy it ran, and
// which sample of its run it is ("": content alone identifies it, as in kvault serve).
struct ContentKey {
  std::string run, task_hash, candidate_hash, language, backend, arch, policy;
  std::string sample;
};

class Store {
 public:
  // How long a call waits for another connection's write lock. Default: 30 s.
  static constexpr int kBusyTimeoutMs = 30000;

  // Opens or creates the store at `path`: creates or migrates the schema, turns on
  // WAL. `path` may be ":memory:" (a private in-memory store, for tests).
  static Result<std::unique_ptr<Store>> Open(const std::string& path);

  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  ~Store();

  // Inserts `record`, or replaces every field of the row with the same key (that
  // row keeps its id). A named sample holds one candidate: the sample's rows of
  // other content (same run, task, backend and arch) are removed. Sets record.id and
  // record.created_at (now, UTC).
  // An empty run, task or candidate_hash is refused with an Error.
  Status Put(AttemptRecord& record);

  // The record of this sample and key, or nullopt. Find: the sample "".
  Result<std::optional<AttemptRecord>> FindSample(const std::string& run, const std::string& task,
                                                  const std::string& sample,
                                                  const std::string& candidate_hash,
                                                  const std::string& backend, const std::string& arch);
  Result<std::optional<AttemptRecord>> Find(const std::string& run, const std::string& task,
                                            const std::string& candidate_hash,
                                            const std::string& backend, const std::string& arch);

  // The newest record of `key` (its sample included) that an engine writing this
  // store made (origin ""), under any task name; nullopt when there is none.
  Result<std::optional<AttemptRecord>> FindVerified(const ContentKey& key);

  // Every record of `run`, ordered by task, then id.
  Result<std::vector<AttemptRecord>> ListRun(const std::string& run);

  // The distinct run names, sorted.
  Result<std::vector<std::string>> ListRuns();

  const std::string& path() const { return path_; }

 private:
  struct Impl;  // the connection and its prepared statements (store.cc)
  Store(std::string path, std::unique_ptr<Impl> impl);
  Error Fail(const std::string& what, const std::string& detail) const;
  // The record on the first row of a bound `SELECT * FROM attempts`, or nullopt.
  // REQUIRES: mu_ held.
  Result<std::optional<AttemptRecord>> FirstRow(sqlite::Statement& s) const;

  const std::string path_;
  std::mutex mu_;
  std::unique_ptr<Impl> impl_;  // guarded by mu_
};

// The database path: `flag` (--db) when given and not empty, else $KVAULT_DB when
// set and not empty, else "./kvault.db".
std::string ResolveDbPath(const std::optional<std::string>& flag);

}  // namespace kvault
