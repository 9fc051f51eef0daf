#pragma once
// The corpus record (docs/corpus.md, "Record"): one kernel (or one question-answer
// pair) with its task, provenance, verification results on each hardware and the
// curation marks (duplicate, contamination).
//
//   KernelRecord r;
//   r.task.name = "relu";  r.task.reference_source = ref_text;
//   r.candidate_source = hip_text;  r.language = "hip";  r.format = "extension";
//   r.provenance.pipeline = "eval";
//   FinishRecord(r);  // fills task.reference_sha256 and id
//   store.Upsert(r);
//
// Thread safety: plain values; the functions are pure.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/json.h"
#include "util/result.h"

namespace kvault::corpus {

inline constexpr const char* kKindKernel = "kernel";
inline constexpr const char* kKindQa = "qa";

// Who produced a result: this vault's engine (`corpus verify`), or an import that
// carried it. An imported verdict is a claim: it is kept and shown, but a record is
// verified only by results of its own engine (docs/corpus.md, "Claims").
inline constexpr const char* kOriginEngine = "engine";
inline constexpr const char* kOriginImport = "import";

// The task a kernel solves: its name and the trusted reference (a KernelBench-format
// PyTorch file, or a baseline kernel for kernel-to-kernel pipelines).
struct TaskRef {
  std::string name;              // e.g. "19_ReLU"; the operation for `stats`
  std::string reference_source;  // "" when the origin did not carry it
  std::string reference_sha256;  // of reference_source; kept as given when that is ""
};

// Where a record came from.
struct Provenance {
  std::string pipeline;     // eval | gen | geak | verl | sft | aig-v0.1 | aig-v0.2 | kernelbench | jsonl
  std::string model;        // the LLM that wrote it, "" unknown
  std::string prompt;       // the prompt it answered, "" unknown
  std::string parent_id;    // the record it was optimised from (HIP-to-HIP), "" none
  std::string source;       // URL or dataset name
  std::string license;      // SPDX id or the dataset's wording, "" unknown
  std::string origin_file;  // the imported file
  int64_t origin_line = 0;  // 1-based line (JSONL) or row (Parquet) in it; 0: whole file
};

// One verification of the record's candidate on one hardware with one toolchain.
// Key within a record: (hardware, toolchain, backend, origin, claim).
struct VerificationResult {
  std::string hardware;   // device name, e.g. "NVIDIA H200", "AMD Instinct MI300X", "cpu"
  std::string toolchain;  // e.g. "nvcc 12.4", "hipcc 6.2", "g++ 12.2.0"; "" unknown
  std::string backend;    // cpu | cuda | hip
  std::string status;     // an OutcomeStatus name (docs/outcomes.md), or an imported verdict
  std::optional<double> speedup;
  std::optional<double> reference_ms;
  std::optional<double> candidate_ms;
  Json environment = Json::object();  // environment fingerprint
  std::string verified_at;            // ISO-8601 UTC; "" unknown
  std::string origin = kOriginImport;  // kOriginEngine only when Reverify measured it
  std::string claim;                   // an import's "file:line"; "" for the engine's
};

// A question-answer pair (kind "qa"), grounded in a library source.
struct QaPair {
  std::string question;
  std::string answer;
  std::string citation;  // e.g. "rocblas/library/src/blas1/rocblas_axpy.cpp:40-72"
};

// A record that overlaps a benchmark suite (set by `kvault corpus decontaminate`).
struct Contamination {
  std::string suite;   // the suite's name
  std::string task;    // the suite's task it overlaps
  std::string reason;  // e.g. "ngram", "signature"
  double score = 0;    // the overlap measure behind the reason
};

struct KernelRecord {
  std::string id;  // RecordId(*this); set by FinishRecord
  std::string kind = kKindKernel;
  TaskRef task;
  std::string candidate_source;  // kind "kernel"
  std::string language;          // hip | cuda | cpp | triton | python | ...
  std::string format;            // extension | native | kernelbench | triton | ...
  std::string arch;              // target architecture, e.g. gfx942, sm_90; "" any
  QaPair qa;                     // kind "qa"
  Provenance provenance;
  std::vector<VerificationResult> results;
  // Curation. duplicate_of: the kept record of this one's cluster, "" when kept; for
  // kind "near_miss" (kept, no duplicate) the passed kernel this wrong one nearly is.
  std::string duplicate_of;
  std::string duplicate_kind;  // "exact" | "near" | "near_miss" | ""
  std::vector<Contamination> contamination;
};

// The stable id: SHA-256 (hex) over the reference's hash, the candidate's exact bytes,
// language and format, each field tagged (util/sha256.h KeyHasher); for kind "qa" over
// question, answer and citation. Provenance, results and marks do not change it.
std::string RecordId(const KernelRecord& record);

// Fills task.reference_sha256 from a non-empty reference source and id from RecordId.
void FinishRecord(KernelRecord& record);

// Licences that state nothing (compared in lower case): a record with one of these, or
// none, comes from a source whose terms are unknown. RecordFilter::licensed_only and
// the hf card read this list.
inline constexpr const char* kUnstatedLicences[] = {"unknown", "noassertion", "none"};
bool LicenceStated(const std::string& license);

// Whether a result counts as verification: the engine's always, an import's claim
// only when `count_claims`.
bool Counts(const VerificationResult& result, bool count_claims);

// The best counted result: the correct one with the highest speedup, else any correct
// one, else the first; nullptr when there is none. "Correct" is status "passed".
const VerificationResult* BestResult(const KernelRecord& record, bool count_claims = false);
bool IsPassed(const VerificationResult& result);

// A record's speed as one stated statistic: the median speedup of its counted passed
// results (on `hardware`, any when ""), and how many results it is the median of.
struct SpeedStat {
  std::optional<double> median;  // nullopt when no counted passed result has a speedup
  int64_t samples = 0;
};
SpeedStat RecordSpeed(const KernelRecord& record, const std::string& hardware, bool count_claims);

// The record as one JSON object (docs/corpus.md, "Record JSON") and back. FromJson
// accepts what ToJson writes; an absent field takes its default, a field of the
// wrong type is an Error naming it. The id is recomputed, never trusted, and every
// result read is an import's claim, whatever its `origin` says.
Json RecordToJson(const KernelRecord& record);
Result<KernelRecord> RecordFromJson(const Json& json);
Json ResultToJson(const VerificationResult& result);
Result<VerificationResult> ResultFromJson(const Json& json);

}  // namespace kvault::corpus
