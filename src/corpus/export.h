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
#include "corpus/export_prompt.h"
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
// The formats of supervised fine-tuning (sft, alpaca, sharegpt): a row teaches its
// answer, so their kernels are ones that passed unless ExportOptions::any_status.
bool SftFormat(ExportFormat format);

// Which tasks a row may come from: every task, or one side of the split by task family.
enum class ExportSplit { kAll, kTrain, kTest };

struct ExportOptions {
  ExportFormat format = ExportFormat::kRecords;
  RecordFilter filter;  // the CLI sets include_duplicates = false unless asked
  std::string output;   // a file; a folder for hf
  PythonEnv python;     // for Parquet
  PromptSettings prompts;      // gen's templates; root "" is an Error for prompt formats
  bool system_prompt = true;   // rows carry gen's system message
  bool chat = false;           // dpo: prompt as chat turns, answers as assistant turns (TRL)
  bool publish = false;        // leave out paths, command lines, host names (PublicResult)
  ExportSplit split = ExportSplit::kAll;  // hf writes train and test whatever this says
  double test_share = 0.1;     // of task families in the test split (task_split.h)
  bool any_status = false;     // sft, alpaca, sharegpt: also kernels without a counted passed result
};

struct ExportSummary {
  int64_t records = 0;  // records that passed the filter
  int64_t rows = 0;     // rows written
  int64_t skipped = 0;  // records the format cannot hold (e.g. verl: no reference; no prompt template;
                        // dpo: no verdict, or no passed kernel of its task to pair with)
  static constexpr size_t kSkippedWhy = 20;
  std::vector<std::string> skipped_why;  // the first kSkippedWhy records left out for a reason of their own
  int64_t test_rows = 0;       // hf: rows of the test split
  int64_t other_split = 0;     // records left out: their task family is in the other split
  int64_t not_passed = 0;      // sft formats: kernels left out without a counted passed result
  int64_t unlicensed = 0;      // rows of a record whose source states no licence (LicenceStated)
  std::vector<std::string> files;
  Json ToJson() const;
  void Skip(const std::string& record_id, const std::string& why);  // counts it, keeps why
};

// What a published export says of a file or source: a path's last part; a URL or a
// plain name as it is.
std::string PublicName(const std::string& text);
// Free text as a published export says it (a record's prompt, whose feedback quotes
// compiler output): every absolute or home path of two parts or more (`/tmp/x/k.cpp`,
// `~/data/rows.jsonl`) spelled as its last part (`k.cpp:7:3: error` stays readable);
// URLs and the rest as they are.
std::string PublicText(const std::string& text);
// What a published export says of a model: a hub id (`org/name`) or a plain name as
// it is; a local path (`/models/x`, `~/x`, `./x`, `a/b/c`), as servers often name a
// model they load, its last part.
std::string PublicModel(const std::string& model);

// A result as an export shows it: with publish, without its environment fingerprint
// (host, paths, compiler command lines) and its claim's file.
Json ExportedResult(const VerificationResult& result, bool publish);

// Whether `options.output` can take the format: a file in an existing folder (not a
// folder), or for hf a folder (not a file). Said before anything is read or rendered.
Status CheckExportOutput(const ExportOptions& options);

Result<ExportSummary> ExportRecords(CorpusStore& vault, const ExportOptions& options);

// Row builders (one place for what a row holds; the tests feed them to consumers).
// What every row builder reads besides the record: the filter (hardware, claims), the
// record's rendered prompt (ExportPrompts; system "" when left out) and publish.
struct RowContext {
  const RecordFilter& filter;
  RenderedPrompt prompt;
  bool publish = false;
};
// The assistant answer: the candidate in one fenced block tagged with its language; a
// qa record's answer.
std::string AnswerText(const KernelRecord& record);
// The result a row reports: the best counted one on filter.hardware (any when empty).
const VerificationResult* ChosenResult(const KernelRecord& record, const RecordFilter& filter);
// The chat of a row: system (when not ""), user, then assistant when `answer`.
Json ChatMessages(const KernelRecord& record, const RowContext& context, bool answer);
Json SftRow(const KernelRecord& record, const RowContext& context);
Json AlpacaRow(const KernelRecord& record, const RowContext& context);
Json ShareGptRow(const KernelRecord& record, const RowContext& context);
// nullopt for a record verl cannot hold (qa, or no reference source).
std::optional<Json> VerlRow(const KernelRecord& record, const RowContext& context, int64_t index);
Json HfRow(const KernelRecord& record, const RowContext& context);
// The record JSON, with publish its results and provenance as ExportedResult says.
Json RecordRow(const KernelRecord& record, bool publish);

}  // namespace kvault::corpus
