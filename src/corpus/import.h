#pragma once
// `kvault corpus import`: kernels from other places into the vault (docs/corpus.md,
// "Import"). Every format reads its rows one at a time; a malformed row is reported
// with its file and line (JSON Lines, JSON arrays: element number) or row (Parquet)
// and skipped, and never stops the import.
//
//   ImportOptions o;  o.format = ImportFormat::kSft;
//   auto report = ImportPaths(vault, o, {"sft.jsonl"});
//   // report->imported, report->skipped, report->malformed
//
// Errors (the import stops; rows already committed stay): the vault fails, a path
// cannot be read at all, Parquet cannot be read (no pyarrow).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "corpus/corpus_store.h"
#include "corpus/parquet.h"
#include "geak/geak_import.h"

namespace kvault::corpus {

enum class ImportFormat {
  kStore,        // a kvault store file (.db): eval / gen / serve attempts
  kGeak,         // a folder of GEAK-eval task files (TritonBench-G, ROCmBench)
  kVerl,         // veRL RL rows (Parquet)
  kSft,          // SFT samples (JSON Lines)
  kAigV01,       // an AIG-Datasets v0.1 tree
  kAigV02,       // AIG-Datasets v0.2 unified JSON (array or JSON Lines)
  kKernelBench,  // a folder of KernelBench-format ModelNew files (needs a suite)
  kRecords,      // the vault's own record JSON Lines (export --format records)
};

std::optional<ImportFormat> ImportFormatFromString(std::string_view name);
// "store|geak|verl|sft|aig-v0.1|aig-v0.2|kernelbench|records"
std::string ImportFormatNames();

struct ImportOptions {
  ImportFormat format = ImportFormat::kRecords;
  // Task folder: the references of store and kernelbench imports. Default: none (a
  // store import then keeps each task's hash without its source).
  std::string suite;
  GeakFormat geak = GeakFormat::kTritonBenchG;
  std::string source;   // provenance.source of every record; Default: the format's own
  std::string license;  // provenance.license of every record; Default: ""
  PythonEnv python;     // for Parquet
};

// A row that was not imported: its place and why.
struct ImportProblem {
  std::string file;
  int64_t line = 0;  // 1-based line, element or row; 0 for the whole file
  std::string why;
};

struct ImportReport {
  int64_t imported = 0;                 // records written (new or updated)
  std::vector<ImportProblem> skipped;   // well-formed rows holding no kernel
  std::vector<ImportProblem> malformed; // rows that could not be read
  std::vector<std::string> empty_paths; // paths that held nothing of the format: no row at all
  // Rows read, whatever became of them (imported, skipped or malformed).
  size_t rows() const { return static_cast<size_t>(imported) + skipped.size() + malformed.size(); }
  Json ToJson() const;
};

Result<ImportReport> ImportPaths(CorpusStore& vault, const ImportOptions& options,
                                 const std::vector<std::string>& paths);

}  // namespace kvault::corpus
