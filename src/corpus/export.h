#pragma once
// `kvault corpus export`: the vault's records as training data (docs/corpus.md,
// "Export"). Records are read one at a time through the filter; each format turns a
// record (or, for dpo, a pair of one task's records) into one row.
//
//   ExportOptions o;  o.format = ExportFormat::kVerl;  o.output = "rl.parquet";
//   o.filter.status = "passed";
//   auto summary = ExportRecords(vault, o);
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "corpus/corpus_store.h"
#include "corpus/parquet.h"

namespace kvault::corpus {

enum class ExportFormat {
  kRecords,   // the vault's record JSON, one per line (import --from records)
  kSft,       // AMD's SFT samples: messages + metadata (JSON Lines)
  kAlpaca,    // LLaMA-Factory alpaca: instruction, input, output (JSON Lines)
  kShareGpt,  // LLaMA-Factory sharegpt: conversations of from/value (JSON Lines)
  kVerl,      // veRL RL rows (Parquet): prompt, data_source, ability, reward_model, extra_info
  kDpo,       // preference pairs of one task: prompt, chosen, rejected (JSON Lines)
  kHf,        // a Hugging Face dataset folder: data/*.parquet + README.md card
};

std::optional<ExportFormat> ExportFormatFromString(std::string_view name);
std::string ExportFormatNames();  // "records|sft|alpaca|sharegpt|verl|dpo|hf"

struct ExportOptions {
  ExportFormat format = ExportFormat::kRecords;
  RecordFilter filter;  // the CLI sets include_duplicates = false unless asked
  std::string output;   // a file; a folder for hf
  PythonEnv python;     // for Parquet
};

struct ExportSummary {
  int64_t records = 0;  // records that passed the filter
  int64_t rows = 0;     // rows written
  int64_t skipped = 0;  // records the format cannot hold (e.g. verl: no reference)
  std::vector<std::string> files;
  Json ToJson() const;
};

Result<ExportSummary> ExportRecords(CorpusStore& vault, const ExportOptions& options);

// Row builders (one place for what a row holds; the tests feed them to consumers).
// The user prompt of a kernel record: the instruction and the reference in a python
// block; a qa record's question.
std::string TaskPrompt(const KernelRecord& record);
// The assistant answer: the candidate in one fenced block tagged with its language; a
// qa record's answer.
std::string AnswerText(const KernelRecord& record);
// The result a row reports: the best one on filter.hardware (any when empty).
const VerificationResult* ChosenResult(const KernelRecord& record, const RecordFilter& filter);
Json SftRow(const KernelRecord& record, const RecordFilter& filter);
Json AlpacaRow(const KernelRecord& record);
Json ShareGptRow(const KernelRecord& record);
// nullopt for a record verl cannot hold (qa, or no reference source).
std::optional<Json> VerlRow(const KernelRecord& record, const RecordFilter& filter, int64_t index);
Json HfRow(const KernelRecord& record, const RecordFilter& filter);

}  // namespace kvault::corpus
