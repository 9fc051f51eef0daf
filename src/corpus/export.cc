#include "corpus/export.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <tuple>

#include "corpus/export_card.h"
#include "corpus/stats.h"
#include "corpus/task_split.h"
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
std::vector<Column> ColumnsOf(ExportFormat f, bool chat = false) {
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
    case ExportFormat::kAlpaca: return Strings({"instruction", "input", "output", "system"});
    case ExportFormat::kShareGpt: return {{"conversations", ColumnType::kJson}, {"system", ColumnType::kString}};
    case ExportFormat::kVerl:
      return {{"prompt", ColumnType::kJson},       {"data_source", ColumnType::kString},
              {"ability", ColumnType::kString},    {"reward_model", ColumnType::kJson},
              {"extra_info", ColumnType::kJson}};
    case ExportFormat::kDpo:
      if (chat)
        return {{"prompt", ColumnType::kJson}, {"chosen", ColumnType::kJson}, {"rejected", ColumnType::kJson},
                {"metadata", ColumnType::kJson}};
      return {{"prompt", ColumnType::kString}, {"system", ColumnType::kString}, {"chosen", ColumnType::kString},
              {"rejected", ColumnType::kString}, {"metadata", ColumnType::kJson}};
    case ExportFormat::kHf: {
      std::vector<Column> c = Strings({"id", "kind", "task_name", "reference_source", "reference_sha256",
                                       "candidate_source", "language", "format", "arch", "question", "answer",
                                       "citation", "system_prompt", "prompt", "status"});
      c.push_back({"speedup", ColumnType::kDouble, true});
      c.push_back({"speedup_samples", ColumnType::kInt});
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

// What one export carries through its passes over the vault.
struct Pass {
  const ExportOptions& o;
  ExportPrompts prompts;
  std::optional<TaskSplit> split;  // built when a split is asked for, and for hf
  ExportSummary summary;
  SourceLicences licences;

  // Whether the split lets the record's task family in (hf writes both sides).
  bool InSplit(const KernelRecord& r) const {
    if (o.split == ExportSplit::kAll || o.format == ExportFormat::kHf) return true;
    return split->InTest(r.task.name) == (o.split == ExportSplit::kTest);
  }
  // A row of these records was written.
  void Wrote(const KernelRecord& r, const KernelRecord* other = nullptr) {
    ++licences[{o.publish ? PublicName(r.provenance.source) : r.provenance.source, r.provenance.license}];
    if (!LicenceStated(r.provenance.license) || (other && !LicenceStated(other->provenance.license)))
      ++summary.unlicensed;
  }
};

// The row context of a record: its prompt rendered from gen's templates.
Result<RowContext> ContextOf(const KernelRecord& r, const ExportOptions& o, ExportPrompts& prompts) {
  RowContext c{o.filter, {}, o.publish};
  auto p = prompts.Of(r);
  if (!p) return Error{p.error()};
  c.prompt = std::move(*p);
  if (!o.system_prompt) c.prompt.system.clear();
  return c;
}

// One task's kernels, as the dpo pairing needs them.
struct Contender {
  std::string id;
  bool passed = false;
  std::optional<double> speedup;  // the median of its counted passed results
  std::string status;
  std::string near_miss_of;  // the passed kernel this one nearly is (dedup's near_miss)
};

// For each task: each slower correct or wrong kernel against a faster correct one,
// a near miss against the passed kernel it nearly is (the sharpest negative), every
// other against the task's fastest.
Status WriteDpo(CorpusStore& vault, Pass& pass, RowWriter& rows) {
  const ExportOptions& o = pass.o;
  ExportSummary& summary = pass.summary;
  // A pair answers one prompt: the same task (name and reference) and file format.
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<Contender>> tasks;
  Status s = vault.ForEach(o.filter, [&](const KernelRecord& r) {
    ++summary.records;
    if (!pass.InSplit(r)) {
      ++summary.other_split;
      return true;
    }
    const VerificationResult* best = ChosenResult(r, o.filter);
    if (r.kind != kKindKernel) {
      summary.Skip(r.id, "a question-answer pair has no rejected answer to pair");
      return true;
    }
    if (!best) {
      summary.Skip(r.id, o.filter.count_claims ? "no verification result to pair"
                                               : "no result of this vault's engine to pair (corpus verify; "
                                                 "--claims pairs imported verdicts)");
      return true;
    }
    Contender c{r.id, IsPassed(*best), RecordSpeed(r, o.filter.hardware, o.filter.count_claims).median,
                best->status, r.duplicate_kind == "near_miss" ? r.duplicate_of : ""};
    if (!c.passed) c.speedup.reset();
    tasks[{r.task.name, r.task.reference_sha256, PromptFormatOf(r)}].push_back(std::move(c));
    return true;
  });
  if (!s) return s;
  auto speed = [](const Contender& c) { return c.speedup.value_or(0); };
  for (auto& [task, list] : tasks) {
    const Contender* fastest = nullptr;
    for (const Contender& c : list)
      if (c.passed && (!fastest || speed(c) > speed(*fastest))) fastest = &c;
    if (!fastest) {  // nothing of this prompt passed: no chosen answer for any of them
      for (const Contender& c : list) summary.Skip(c.id, "no kernel of its task passed: nothing to pair it with");
      continue;
    }
    for (const Contender& c : list) {
      const Contender* chosen = fastest;
      if (!c.near_miss_of.empty())
        for (const Contender& p : list)
          if (p.id == c.near_miss_of && p.passed) chosen = &p;
      if (&c == chosen || (c.passed && speed(c) >= speed(*chosen))) continue;
      auto chosen_record = vault.Get(chosen->id);
      if (!chosen_record || !*chosen_record) return Error{"dpo: cannot read " + chosen->id};
      auto rejected = vault.Get(c.id);
      if (!rejected || !*rejected) return Error{"dpo: cannot read " + c.id};
      auto context = ContextOf(**chosen_record, o, pass.prompts);
      if (!context) {
        summary.Skip(c.id, context.error());
        continue;
      }
      auto optional = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
      auto turn = [](const std::string& answer) { return Json::array({{{"role", "assistant"}, {"content", answer}}}); };
      Json row = o.chat ? Json{{"prompt", ChatMessages(**chosen_record, *context, false)},
                               {"chosen", turn(AnswerText(**chosen_record))},
                               {"rejected", turn(AnswerText(**rejected))}}
                        : Json{{"prompt", context->prompt.user},
                               {"system", context->prompt.system},
                               {"chosen", AnswerText(**chosen_record)},
                               {"rejected", AnswerText(**rejected)}};
      row["metadata"] = {{"kernel_name", std::get<0>(task)},
                         {"chosen_id", chosen->id},
                         {"rejected_id", c.id},
                         {"chosen_speedup", optional(chosen->speedup)},
                         {"rejected_speedup", optional(c.speedup)},
                         {"rejected_status", c.status},
                         {"near_miss", !c.near_miss_of.empty() && chosen->id == c.near_miss_of},
                         {"speedup_statistic", "median"}};
      rows.Add(std::move(row));
      pass.Wrote(**chosen_record, &**rejected);
    }
  }
  return Status::Ok();
}

// Every record the filter and split pass, one row each; `test` (hf only) gets the
// rows of the test split's task families. The sft formats take kernels that passed
// (a counted result) unless any_status.
Status WriteEach(CorpusStore& vault, Pass& pass, RowWriter& rows, RowWriter* test = nullptr) {
  const ExportOptions& o = pass.o;
  ExportSummary& summary = pass.summary;
  return vault.ForEach(o.filter, [&](const KernelRecord& r) {
    ++summary.records;
    if (!pass.InSplit(r)) {
      ++summary.other_split;
      return true;
    }
    RowWriter& out = test && pass.split->InTest(r.task.name) ? *test : rows;
    if (o.format == ExportFormat::kRecords) {
      out.Add(RecordRow(r, o.publish));
      pass.Wrote(r);
      return true;
    }
    if (o.format == ExportFormat::kVerl && (r.kind != kKindKernel || r.task.reference_source.empty())) {
      ++summary.skipped;
      return true;
    }
    if (SftFormat(o.format) && r.kind == kKindKernel && !o.any_status) {
      const VerificationResult* best = ChosenResult(r, o.filter);
      if (!best || !IsPassed(*best)) {
        ++summary.not_passed;
        return true;
      }
    }
    auto c = ContextOf(r, o, pass.prompts);
    if (!c) {  // e.g. a format gen has no template for: the row is left out, and why said
      summary.Skip(r.id, c.error());
      return true;
    }
    switch (o.format) {
      case ExportFormat::kSft: out.Add(SftRow(r, *c)); break;
      case ExportFormat::kAlpaca: out.Add(AlpacaRow(r, *c)); break;
      case ExportFormat::kShareGpt: out.Add(ShareGptRow(r, *c)); break;
      case ExportFormat::kHf: out.Add(HfRow(r, *c)); break;
      case ExportFormat::kVerl: out.Add(*VerlRow(r, *c, out.written())); break;
      case ExportFormat::kRecords:
      case ExportFormat::kDpo: break;
    }
    pass.Wrote(r);
    return true;
  });
}

Status ExportHf(CorpusStore& vault, Pass& pass, const TempDir& tmp) {
  const ExportOptions& o = pass.o;
  ExportSummary& summary = pass.summary;
  const std::string train_rows = tmp.Join("train.jsonl"), test_rows = tmp.Join("test.jsonl");
  int64_t train = 0;
  {
    std::ofstream train_out(train_rows, std::ios::binary), test_out(test_rows, std::ios::binary);
    RowWriter rows(ColumnsOf(o.format), train_out), test(ColumnsOf(o.format), test_out);
    if (Status s = WriteEach(vault, pass, rows, &test); !s) return s;
    rows.Flush();
    test.Flush();
    train = rows.written();
    summary.test_rows = test.written();
    summary.rows = train + summary.test_rows;
    if (!train_out || !test_out) return Error{tmp.path() + ": write failed"};
  }
  // A card over no data file is a dataset datasets.load_dataset cannot open.
  if (summary.rows == 0) return Error{"no record to export as " + o.output + " (a dataset needs one row)"};
  const fs::path dir(o.output);
  if (Status s = EnsureDir((dir / "data").string()); !s) return s;
  for (const char* stale : {"train-00000-of-00001.parquet", "test-00000-of-00001.parquet"}) {
    std::error_code ec;
    fs::remove(dir / "data" / stale, ec);
  }
  for (auto [rows_path, n, name] : {std::tuple{train_rows, train, "train"}, std::tuple{test_rows, summary.test_rows, "test"}}) {
    if (n == 0) continue;
    const std::string data = (dir / "data" / (std::string(name) + "-00000-of-00001.parquet")).string();
    if (Status s = JsonlToParquet(o.python, rows_path, data); !s) return s;
    summary.files.push_back(data);
  }
  auto stats = ComputeStats(vault, o.filter);
  if (!stats) return Error{stats.error()};
  for (auto [name, text] : {std::pair{"README.md", DatasetCard(*stats, o, summary, pass.licences)},
                            std::pair{"LICENSE.md", LicenceFile(pass.licences)}}) {
    const std::string path = (dir / name).string();
    if (Status w = WriteFileAtomic(path, text); !w) return w;
    summary.files.push_back(path);
  }
  return Status::Ok();
}

// The task families of the vault, for a split.
Status BuildSplit(CorpusStore& vault, Pass& pass) {
  auto split = TaskSplit::Build(vault, pass.o.test_share);
  if (!split) return Error{split.error()};
  pass.split.emplace(std::move(*split));
  return Status::Ok();
}

}  // namespace

std::optional<ExportFormat> ExportFormatFromString(std::string_view name) { return FromName(kFormats, name); }

std::string ExportFormatNames() { return NamesOf(kFormats); }

bool SftFormat(ExportFormat f) {
  return f == ExportFormat::kSft || f == ExportFormat::kAlpaca || f == ExportFormat::kShareGpt;
}

Json ExportSummary::ToJson() const {
  return {{"records", records},         {"rows", rows},           {"skipped", skipped},
          {"skipped_why", skipped_why}, {"test_rows", test_rows}, {"other_split", other_split},
          {"not_passed", not_passed},   {"unlicensed", unlicensed}, {"files", files}};
}

void ExportSummary::Skip(const std::string& record_id, const std::string& why) {
  ++skipped;
  if (skipped_why.size() < kSkippedWhy) skipped_why.push_back("record " + record_id + ": " + why);
}

Status CheckExportOutput(const ExportOptions& o) {
  const std::string format = "--format " + std::string(NameOf(kFormats, o.format));
  if (o.output.empty()) return Error{"no output path (-o PATH)"};
  // `kvault export` takes - for standard output; a file named - here would surprise.
  if (o.output == "-") return Error{"-o -: a file or folder to write, not standard output"};
  std::error_code ec;
  const fs::path out(o.output);
  const fs::file_status st = fs::status(out, ec);
  if (o.format == ExportFormat::kHf) {
    if (fs::exists(st) && !fs::is_directory(st))
      return Error{o.output + ": a file (" + format + " writes a folder: data/, README.md, LICENSE.md)"};
    return Status::Ok();
  }
  if (fs::is_directory(st)) return Error{o.output + ": a folder (" + format + " writes one file)"};
  const fs::path parent = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  if (!fs::is_directory(parent, ec)) return Error{o.output + ": no folder " + parent.string() + " to write it in"};
  return Status::Ok();
}

Result<ExportSummary> ExportRecords(CorpusStore& vault, const ExportOptions& o) {
  if (Status s = CheckExportOutput(o); !s) return Error{s.error()};
  auto tmp = TempDir::Create("", "kvault-corpus-export");
  if (!tmp) return Error{tmp.error()};
  // Every format but the vault's own renders gen's prompts: a folder, version or
  // hardware that is not there would leave out every row, after the old file is gone.
  if (o.format != ExportFormat::kRecords)
    if (Status s = CheckPromptSettings(o.prompts); !s) return Error{s.error()};
  Pass pass{o, ExportPrompts(o.prompts), std::nullopt, {}, {}};
  if (o.split != ExportSplit::kAll || o.format == ExportFormat::kHf) {
    if (Status s = BuildSplit(vault, pass); !s) return Error{s.error()};
  }
  if (o.format == ExportFormat::kHf) {
    if (Status s = ExportHf(vault, pass, *tmp); !s) return Error{s.error()};
    return pass.summary;
  }
  ExportSummary& summary = pass.summary;
  const bool parquet = o.format == ExportFormat::kVerl;
  const std::string jsonl = parquet ? tmp->Join("rows.jsonl") : o.output + ".tmp";
  {
    std::ofstream out(jsonl, std::ios::binary | std::ios::trunc);
    if (!out) return Error{jsonl + ": cannot write"};
    RowWriter rows(ColumnsOf(o.format, o.chat), out);
    Status s = o.format == ExportFormat::kDpo ? WriteDpo(vault, pass, rows) : WriteEach(vault, pass, rows);
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
