#include "corpus/export.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "corpus/stats.h"
#include "export/writers.h"
#include "util/files.h"
#include "corpus/names.h"
#include "util/strings.h"

namespace kvault::corpus {
namespace {

namespace fs = std::filesystem;
using exporting::Column;
using exporting::ColumnType;

constexpr Named<ExportFormat> kFormats[] = {
    {ExportFormat::kRecords, "records"}, {ExportFormat::kSft, "sft"},   {ExportFormat::kAlpaca, "alpaca"},
    {ExportFormat::kShareGpt, "sharegpt"}, {ExportFormat::kVerl, "verl"}, {ExportFormat::kDpo, "dpo"},
    {ExportFormat::kHf, "hf"},
};

constexpr size_t kChunk = 1000;  // rows held before they are written

std::vector<Column> Strings(std::initializer_list<const char*> names) {
  std::vector<Column> out;
  for (const char* n : names) out.push_back({n, ColumnType::kString});
  return out;
}

// The columns of each JSON Lines format, in order (export/rows.h's model).
std::vector<Column> ColumnsOf(ExportFormat f) {
  switch (f) {
    case ExportFormat::kRecords:
      return {{"id", ColumnType::kString},          {"kind", ColumnType::kString},
              {"task", ColumnType::kJson},          {"candidate_source", ColumnType::kString},
              {"language", ColumnType::kString},    {"format", ColumnType::kString},
              {"arch", ColumnType::kString},        {"qa", ColumnType::kJson},
              {"provenance", ColumnType::kJson},    {"results", ColumnType::kJson},
              {"duplicate_of", ColumnType::kString}, {"duplicate_kind", ColumnType::kString},
              {"contamination", ColumnType::kJson}};
    case ExportFormat::kSft: return {{"messages", ColumnType::kJson}, {"metadata", ColumnType::kJson}};
    case ExportFormat::kAlpaca: return Strings({"instruction", "input", "output"});
    case ExportFormat::kShareGpt: return {{"conversations", ColumnType::kJson}};
    case ExportFormat::kVerl:
      return {{"prompt", ColumnType::kJson},       {"data_source", ColumnType::kString},
              {"ability", ColumnType::kString},    {"reward_model", ColumnType::kJson},
              {"extra_info", ColumnType::kJson}};
    case ExportFormat::kDpo:
      return {{"prompt", ColumnType::kString}, {"chosen", ColumnType::kString},
              {"rejected", ColumnType::kString}, {"metadata", ColumnType::kJson}};
    case ExportFormat::kHf: {
      std::vector<Column> c = Strings({"id", "kind", "task_name", "reference_source", "reference_sha256",
                                       "candidate_source", "language", "format", "arch", "question", "answer",
                                       "citation", "prompt", "status"});
      c.push_back({"speedup", ColumnType::kDouble, true});
      for (const Column& s : Strings({"hardware", "pipeline", "model", "parent_id", "source", "license",
                                      "provenance", "results", "contamination", "duplicate_of", "duplicate_kind"}))
        c.push_back(s);
      return c;
    }
  }
  return {};
}

// Rows go to a JSON Lines file in chunks, so no format holds the whole export.
class RowWriter {
 public:
  RowWriter(std::vector<Column> columns, std::ofstream& out) : columns_(std::move(columns)), out_(out) {}
  void Add(Json row) {
    rows_.push_back(std::move(row));
    ++written_;
    if (rows_.size() >= kChunk) Flush();
  }
  void Flush() {
    exporting::WriteJsonl(out_, columns_, rows_);
    rows_.clear();
  }
  int64_t written() const { return written_; }

 private:
  std::vector<Column> columns_;
  std::ofstream& out_;
  std::vector<Json> rows_;
  int64_t written_ = 0;
};

// One task's kernels, as the dpo pairing needs them.
struct Contender {
  std::string id;
  bool passed = false;
  double speedup = 0;
  std::string status;
};

// For each task: the fastest correct kernel against each slower correct or wrong one.
Status WriteDpo(CorpusStore& vault, const ExportOptions& o, RowWriter& rows, ExportSummary& summary) {
  std::map<std::pair<std::string, std::string>, std::vector<Contender>> tasks;
  Status s = vault.ForEach(o.filter, [&](const KernelRecord& r) {
    ++summary.records;
    const VerificationResult* best = ChosenResult(r, o.filter);
    if (r.kind != kKindKernel || !best) {
      ++summary.skipped;
      return true;
    }
    tasks[{r.task.name, r.task.reference_sha256}].push_back(
        {r.id, IsPassed(*best), best->speedup.value_or(0), best->status});
    return true;
  });
  if (!s) return s;
  for (auto& [task, list] : tasks) {
    const Contender* chosen = nullptr;
    for (const Contender& c : list)
      if (c.passed && (!chosen || c.speedup > chosen->speedup)) chosen = &c;
    if (!chosen) continue;
    auto chosen_record = vault.Get(chosen->id);
    if (!chosen_record || !*chosen_record) return Error{"dpo: cannot read " + chosen->id};
    for (const Contender& c : list) {
      if (&c == chosen || (c.passed && c.speedup >= chosen->speedup)) continue;
      auto rejected = vault.Get(c.id);
      if (!rejected || !*rejected) return Error{"dpo: cannot read " + c.id};
      rows.Add({{"prompt", TaskPrompt(**chosen_record)},
                {"chosen", AnswerText(**chosen_record)},
                {"rejected", AnswerText(**rejected)},
                {"metadata",
                 {{"kernel_name", task.first},
                  {"chosen_id", chosen->id},
                  {"rejected_id", c.id},
                  {"chosen_speedup", chosen->speedup},
                  {"rejected_speedup", c.speedup},
                  {"rejected_status", c.status}}}});
    }
  }
  return Status::Ok();
}

Status WriteEach(CorpusStore& vault, const ExportOptions& o, RowWriter& rows, ExportSummary& summary) {
  return vault.ForEach(o.filter, [&](const KernelRecord& r) {
    ++summary.records;
    switch (o.format) {
      case ExportFormat::kRecords: rows.Add(RecordToJson(r)); break;
      case ExportFormat::kSft: rows.Add(SftRow(r, o.filter)); break;
      case ExportFormat::kAlpaca: rows.Add(AlpacaRow(r)); break;
      case ExportFormat::kShareGpt: rows.Add(ShareGptRow(r)); break;
      case ExportFormat::kHf: rows.Add(HfRow(r, o.filter)); break;
      case ExportFormat::kVerl:
        if (auto row = VerlRow(r, o.filter, rows.written())) rows.Add(std::move(*row));
        else ++summary.skipped;
        break;
      case ExportFormat::kDpo: break;
    }
    return true;
  });
}

std::string CountsLines(const std::map<std::string, int64_t>& m) {
  std::string out;
  for (const auto& [name, n] : m) out += "| " + name + " | " + std::to_string(n) + " |\n";
  return out;
}

// The dataset card: what is in the folder, where it came from, and what was dropped.
std::string DatasetCard(const CorpusStats& s, const ExportOptions& o, const ExportSummary& summary) {
  std::ostringstream card;
  card << "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path: data/*.parquet\n"
       << "tags:\n- gpu-kernels\n- code\n---\n\n# KernelVault corpus export\n\n"
       << summary.rows << " records, each a kernel verified against a PyTorch reference (or a "
       << "question-answer pair), with its provenance and verification results.\n\n"
       << "## Counts\n\n| kind | records |\n|---|---|\n" << CountsLines(s.by_kind)
       << "\n| language | records |\n|---|---|\n" << CountsLines(s.by_language)
       << "\n| status (best result) | records |\n|---|---|\n" << CountsLines(s.by_status)
       << "\n## Sources\n\n| source | records |\n|---|---|\n" << CountsLines(s.by_source)
       << "\n## Licences\n\n| licence | records |\n|---|---|\n" << CountsLines(s.by_license)
       << "\n## Decontamination\n\n";
  if (s.contamination_by_suite.empty()) {
    card << "No decontamination was run on this vault: no record is marked.\n";
  } else {
    card << "| benchmark suite | records marked in the vault |\n|---|---|\n";
    for (const auto& [suite, n] : s.contamination_by_suite) card << "| " << suite << " | " << n << " |\n";
    card << "\n" << (o.filter.decontaminated_only ? "Marked records were left out of this export."
                                                  : "Marked records are included; their `contamination` column says why.")
         << " " << s.contaminated << " exported records carry a mark.\n";
  }
  card << "\n## Duplicates\n\n"
       << (o.filter.include_duplicates ? "Records marked duplicates are included (`duplicate_of`).\n"
                                       : "Records marked duplicates were left out.\n")
       << "\n## Filters\n\nstatus `" << o.filter.status << "`, hardware `" << o.filter.hardware
       << "`, minimum speedup `" << (o.filter.min_speedup ? std::to_string(*o.filter.min_speedup) : "") << "`, language `"
       << o.filter.language << "`.\n";
  return card.str();
}

Result<ExportSummary> ExportHf(CorpusStore& vault, const ExportOptions& o, const std::string& rows_path) {
  ExportSummary summary;
  {
    std::ofstream out(rows_path, std::ios::binary);
    RowWriter rows(ColumnsOf(o.format), out);
    if (Status s = WriteEach(vault, o, rows, summary); !s) return Error{s.error()};
    rows.Flush();
    summary.rows = rows.written();
    if (!out) return Error{rows_path + ": write failed"};
  }
  const fs::path dir(o.output);
  if (Status s = EnsureDir((dir / "data").string()); !s) return Error{s.error()};
  const std::string data = (dir / "data" / "train-00000-of-00001.parquet").string();
  if (summary.rows > 0) {
    if (Status s = JsonlToParquet(o.python, rows_path, data); !s) return Error{s.error()};
    summary.files.push_back(data);
  }
  auto stats = ComputeStats(vault, o.filter);
  if (!stats) return Error{stats.error()};
  const std::string readme = (dir / "README.md").string();
  if (Status s = WriteFileAtomic(readme, DatasetCard(*stats, o, summary)); !s) return Error{s.error()};
  summary.files.push_back(readme);
  return summary;
}

}  // namespace

std::optional<ExportFormat> ExportFormatFromString(std::string_view name) { return FromName(kFormats, name); }

std::string ExportFormatNames() { return NamesOf(kFormats); }

Json ExportSummary::ToJson() const {
  return {{"records", records}, {"rows", rows}, {"skipped", skipped}, {"files", files}};
}

Result<ExportSummary> ExportRecords(CorpusStore& vault, const ExportOptions& o) {
  auto tmp = TempDir::Create("", "kvault-corpus-export");
  if (!tmp) return Error{tmp.error()};
  if (o.format == ExportFormat::kHf) return ExportHf(vault, o, tmp->Join("rows.jsonl"));
  const bool parquet = o.format == ExportFormat::kVerl;
  const std::string jsonl = parquet ? tmp->Join("rows.jsonl") : o.output + ".tmp";
  ExportSummary summary;
  {
    std::ofstream out(jsonl, std::ios::binary | std::ios::trunc);
    if (!out) return Error{jsonl + ": cannot write"};
    RowWriter rows(ColumnsOf(o.format), out);
    Status s = o.format == ExportFormat::kDpo ? WriteDpo(vault, o, rows, summary) : WriteEach(vault, o, rows, summary);
    if (!s) return Error{s.error()};
    rows.Flush();
    summary.rows = rows.written();
    out.close();
    if (!out) return Error{jsonl + ": write failed"};
  }
  if (parquet) {
    if (summary.rows == 0) return Error{"no record to export as " + o.output + " (Parquet needs one row)"};
    if (Status s = JsonlToParquet(o.python, jsonl, o.output); !s) return Error{s.error()};
  } else {
    std::error_code ec;
    fs::rename(jsonl, o.output, ec);
    if (ec) return Error{o.output + ": " + ec.message()};
  }
  summary.files.push_back(o.output);
  return summary;
}

}  // namespace kvault::corpus
