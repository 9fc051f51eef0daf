#pragma once
// The vault: the corpus of kernel records in its own SQLite file (docs/corpus.md,
// "Vault file"). Default path ./vault.db (`--vault PATH`).
//
//   auto vault = CorpusStore::Open("vault.db");
//   if (!vault) return Error{vault.error()};
//   vault->UpsertMany(records);                        // one transaction
//   RecordFilter f;  f.status = "passed";  f.include_duplicates = false;
//   vault->ForEach(f, [&](const KernelRecord& r) { ...; return true; });
//
// Thread safety: none. A CorpusStore is used by one thread at a time. Several
// CorpusStores (in one process or many) may open the same file: WAL mode, a writer
// waits up to kBusyTimeoutMs for another writer's lock.
//
// Errors: every call returns an Error (never throws) for an unreadable, corrupt or
// foreign file, a file of a newer schema, or a failed statement; messages name the path.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "corpus/record.h"
#include "util/result.h"

namespace kvault::corpus {

// Which records ForEach / Count visit. Default: every record.
struct RecordFilter {
  // Conditions on one result of the record (all must hold for the same result):
  std::string status;              // result status, e.g. "passed"; "" any
  std::string hardware;            // result hardware, exact; "" any
  std::optional<double> min_speedup;  // result speedup >= this
  bool count_claims = false;  // false: only results of this vault's engine (origin "engine")
  // Conditions on the record:
  std::string language;  // "" any
  std::string kind;      // "kernel" | "qa" | "" any
  bool decontaminated_only = false;  // true: skip records with any contamination mark
  bool include_duplicates = true;    // false: skip records marked exact or near duplicates
  bool licensed_only = false;        // true: skip records whose licence is unstated (LicenceStated)
};

// A record marked a duplicate of another (kind "exact" or "near"), or a near miss of a
// passed one (kind "near_miss").
struct DuplicateMark {
  std::string record_id;
  std::string duplicate_of;
  std::string kind;
};

// A record found in a benchmark suite (SetContamination's suite applies).
struct ContaminationMark {
  std::string record_id;
  std::string task;    // the suite's task
  std::string reason;  // e.g. "ngram", "signature"
  double score = 0;
};

class CorpusStore {
 public:
  static constexpr int kBusyTimeoutMs = 30000;
  static constexpr const char* kDefaultPath = "vault.db";

  // Opens or creates the vault at `path` (":memory:" for a private one): WAL, schema
  // created or migrated.
  static Result<CorpusStore> Open(const std::filesystem::path& path);

  CorpusStore(CorpusStore&&) noexcept;
  CorpusStore& operator=(CorpusStore&&) noexcept;
  ~CorpusStore();

  // Inserts the record, or replaces its own fields (task, source, provenance, ...)
  // where one of the same id exists. Its results are added, each replacing an earlier
  // result of the same (hardware, toolchain, backend, origin, claim); earlier results
  // of other keys stay, so an import's claim never replaces the engine's result.
  // Curation marks it carries (duplicate_of, contamination) are written; a record
  // without marks keeps the earlier ones. The id is recomputed (RecordId).
  // An empty task name for kind "kernel", an empty question for "qa", or a parent_id
  // naming the record itself is an Error.
  Status Upsert(const KernelRecord& record);
  // The same for every record, in one transaction: all or none.
  Status UpsertMany(const std::vector<KernelRecord>& records);

  // Calls `visit` with each matching record in insertion order, complete with its
  // results and marks, reading one record at a time; stops early when `visit`
  // returns false. REQUIRES: `visit` does not write to this store (collect the
  // changes, then call Set*/Upsert after ForEach returns).
  Status ForEach(const RecordFilter& filter,
                 const std::function<bool(const KernelRecord&)>& visit);
  Result<int64_t> Count(const RecordFilter& filter);
  // Calls `visit` with each distinct task (name, reference SHA-256 and its source, ""
  // when not stored) of every record, sorted by name then SHA-256; what an export's
  // split by task family is built from (task_split.h).
  Status ForEachTask(const std::function<void(const TaskRef&)>& visit);
  Result<std::optional<KernelRecord>> Get(std::string_view id);

  // Replaces every duplicate mark with `marks` (records not named become kept).
  // A mark naming an unknown record is an Error, and nothing changes.
  Status SetDuplicates(const std::vector<DuplicateMark>& marks);
  // Replaces the contamination marks of `suite` with `marks`; other suites' stay.
  Status SetContamination(const std::vector<ContaminationMark>& marks, std::string_view suite);
  // The suites with marks and the number of records each marks, sorted by suite.
  Result<std::vector<std::pair<std::string, int64_t>>> ContaminationSummary();

  // Adds (or replaces, same hardware, toolchain, backend, origin and claim) one result.
  Status AddResult(std::string_view record_id, const VerificationResult& result);
  // True when the record has an engine's result of this hardware and toolchain.
  Result<bool> HasResult(std::string_view record_id, std::string_view hardware,
                         std::string_view toolchain);

  const std::string& path() const { return path_; }

 private:
  struct Impl;  // the connection and its prepared statements (corpus_store.cc)
  CorpusStore(std::string path, std::unique_ptr<Impl> impl);
  Error Fail(const std::string& what, const std::string& detail) const;
  Status UpsertOne(const KernelRecord& record);
  Status ReadDetails(KernelRecord& record);

  std::string path_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvault::corpus
