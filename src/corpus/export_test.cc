// Export: the split by task family, the sft formats' contents, the dataset card's licence.
#include "corpus/export.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <tuple>

#include "corpus/export_card.h"
#include "corpus/task_split.h"
#include "util/files.h"
#include "util/json_parse.h"

namespace kvault::corpus {
namespace {

CorpusStore Memory() {
  auto v = CorpusStore::Open(":memory:");
  if (!v) throw std::runtime_error(v.error());
  return std::move(*v);
}

// A KernelBench task whose forward applies relu `depth` times: one operation per depth.
// `batch`, `dim` size it; `renamed` spells its constants, parameters and locals anew.
std::string Task(int depth, int batch = 16, int dim = 16384, bool renamed = false) {
  const std::string x = renamed ? "inp" : "x", b = renamed ? "n_rows" : "batch_size", d = renamed ? "width" : "dim";
  std::string body;
  for (int k = 0; k < depth; ++k) body += "        " + x + " = torch.relu(" + x + ")\n";
  return "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n    def __init__(self):\n"
         "        super().__init__()\n\n    def forward(self, " + x + "):\n" + body + "        return " + x + "\n\n" +
         b + " = " + std::to_string(batch) + "\n" + d + " = " + std::to_string(dim) + "\n\n"
         "def get_inputs():\n    " + x + " = torch.randn(" + b + ", " + d + ")\n    return [" + x + "]\n\n"
         "def get_init_inputs():\n    return []\n";
}

KernelRecord Kernel(const std::string& task, const std::string& reference, const std::string& status = "passed") {
  KernelRecord r;
  r.task.name = task;
  r.task.reference_source = reference;
  r.candidate_source = "// kernel of " + task + " (" + status + ")\n";
  r.language = "hip";
  r.format = "extension";
  if (!status.empty()) {
    VerificationResult v;
    v.hardware = "H200";
    v.status = status;
    v.speedup = 1.5;
    v.origin = kOriginEngine;
    r.results = {v};
  }
  FinishRecord(r);
  return r;
}

ExportOptions Export(ExportFormat format, const std::string& output) {
  ExportOptions o;
  o.format = format;
  o.output = output;
  const char* root = std::getenv("KVAULT_SOURCE_ROOT");
  o.prompts.root = std::string(root ? root : ".") + "/prompts";
  return o;
}

std::vector<Json> Rows(const std::string& path) {
  std::vector<Json> rows;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) rows.push_back(*ParseJson(line));
  return rows;
}

// Each task t<depth> with a resized copy (other batch and dim) and a renamed one (its
// constants and locals renamed): three task names, one operation.
TEST(TaskSplit, ResizedAndRenamedCopiesFallOnTheSideOfTheirTask) {
  constexpr int kTasks = 200;
  std::vector<KernelRecord> records;
  for (int k = 1; k <= kTasks; ++k) {
    const std::string t = "t" + std::to_string(k);
    records.push_back(Kernel(t, Task(k)));
    records.push_back(Kernel(t + "_resized", Task(k, 64, 4096)));
    records.push_back(Kernel(t + "_renamed", Task(k, 16, 16384, true)));
  }
  records.push_back(Kernel("t1", ""));  // a record of t1 without its reference: by name, t1's family
  CorpusStore vault = Memory();
  ASSERT_TRUE(vault.UpsertMany(records).ok());
  auto split = TaskSplit::Build(vault, 0.3);
  ASSERT_TRUE(split.ok()) << split.error();
  EXPECT_EQ(split->families(), static_cast<size_t>(kTasks));
  int in_test = 0, split_by_name = 0;
  for (int k = 1; k <= kTasks; ++k) {
    const std::string t = "t" + std::to_string(k);
    const bool test = split->InTest(t);
    in_test += test;
    EXPECT_EQ(split->InTest(t + "_resized"), test) << t;
    EXPECT_EQ(split->InTest(t + "_renamed"), test) << t;
    // By name alone (the split before families) some copies fall apart: the test can tell.
    split_by_name += KeyInTestShare(t, 0.3) != KeyInTestShare(t + "_resized", 0.3);
  }
  EXPECT_GT(split_by_name, 0);
  EXPECT_GE(in_test, 40);  // 0.3 of 200 families is 60
  EXPECT_LE(in_test, 80);
  auto again = TaskSplit::Build(vault, 0.3);  // deterministic
  ASSERT_TRUE(again.ok());
  for (int k = 1; k <= kTasks; ++k)
    EXPECT_EQ(again->FamilyOf("t" + std::to_string(k) + "_renamed"), split->FamilyOf("t" + std::to_string(k)));

  // Through an export: train and test share no family, and every record is on one side.
  auto dir = TempDir::Create("", "kvault-corpus-split");
  ASSERT_TRUE(dir.ok());
  std::map<std::string, std::set<std::string>> families;  // side -> family keys
  int64_t rows = 0;
  for (auto [side, name] : {std::pair{ExportSplit::kTrain, "train"}, std::pair{ExportSplit::kTest, "test"}}) {
    ExportOptions o = Export(ExportFormat::kRecords, dir->Join(std::string(name) + ".jsonl"));
    o.split = side;
    o.test_share = 0.3;
    auto summary = ExportRecords(vault, o);
    ASSERT_TRUE(summary.ok()) << summary.error();
    EXPECT_EQ(summary->rows + summary->other_split, static_cast<int64_t>(records.size()));
    rows += summary->rows;
    for (const Json& row : Rows(o.output)) families[name].insert(split->FamilyOf(row["task"]["name"].get<std::string>()));
  }
  EXPECT_EQ(rows, static_cast<int64_t>(records.size()));
  for (const std::string& f : families["test"]) EXPECT_EQ(families["train"].count(f), 0u) << f;
}

TEST(Export, SftFormatsTakePassedKernelsUnlessAnyStatus) {
  KernelRecord claimed = Kernel("relu", "ref\n", "");
  VerificationResult claim;
  claim.status = "passed";  // an import's claim: no verification
  claimed.results = {claim};
  claimed.candidate_source = "// claims to pass\n";
  FinishRecord(claimed);
  KernelRecord qa;
  qa.kind = kKindQa;
  qa.task.name = "lib/axpy.cpp";
  qa.qa = {"What does axpy add?", "`y += alpha * x`", "lib/axpy.cpp:1-3"};
  FinishRecord(qa);
  CorpusStore vault = Memory();
  ASSERT_TRUE(vault.UpsertMany({Kernel("relu", "ref\n"), Kernel("relu", "ref\n", "mismatch"),
                                Kernel("relu", "ref\n", ""), claimed, qa})
                  .ok());
  auto dir = TempDir::Create("", "kvault-corpus-sft");
  ASSERT_TRUE(dir.ok());
  for (ExportFormat format : {ExportFormat::kSft, ExportFormat::kAlpaca, ExportFormat::kShareGpt}) {
    ExportOptions o = Export(format, dir->Join("rows.jsonl"));
    auto summary = ExportRecords(vault, o);
    ASSERT_TRUE(summary.ok()) << summary.error();
    EXPECT_EQ(summary->rows, 2);        // the passed kernel and the qa pair
    EXPECT_EQ(summary->not_passed, 3);  // the wrong, the unverified and the claimed one
    if (format == ExportFormat::kSft) {
      for (const Json& row : Rows(o.output)) {
        if (row["metadata"]["record_id"] == qa.id) continue;
        EXPECT_TRUE(row["metadata"]["pass_exe"].get<bool>()) << row;
      }
    }
    o.any_status = true;
    summary = ExportRecords(vault, o);
    ASSERT_TRUE(summary.ok()) << summary.error();
    EXPECT_EQ(summary->rows, 5);
    EXPECT_EQ(summary->not_passed, 0);
  }
}

TEST(Export, HfOfNoRowIsRefusedBeforeItWritesACard) {
  CorpusStore vault = Memory();
  auto dir = TempDir::Create("", "kvault-corpus-hf");
  ASSERT_TRUE(dir.ok());
  auto summary = ExportRecords(vault, Export(ExportFormat::kHf, dir->Join("hf")));
  ASSERT_FALSE(summary.ok());
  EXPECT_NE(summary.error().find("no record to export"), std::string::npos) << summary.error();
  EXPECT_FALSE(FileExists(dir->Join("hf/README.md")));
}

TEST(Export, AnOutputPathOfTheWrongKindIsRefusedBeforeAnyWork) {
  auto dir = TempDir::Create("", "kvault-corpus-out");
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(WriteFileAtomic(dir->Join("rows.jsonl"), "kept\n").ok());
  for (auto [format, path, why] :
       {std::tuple{ExportFormat::kSft, dir->path(), "a folder (--format sft writes one file)"},
        std::tuple{ExportFormat::kVerl, dir->Join("no/such/x.parquet"), "no folder"},
        std::tuple{ExportFormat::kHf, dir->Join("rows.jsonl"), "a file (--format hf writes a folder"},
        std::tuple{ExportFormat::kSft, std::string("-"), "not standard output"}}) {
    Status s = CheckExportOutput(Export(format, path));
    ASSERT_FALSE(s.ok()) << path;
    EXPECT_NE(s.error().find(why), std::string::npos) << s.error();
  }
  EXPECT_TRUE(CheckExportOutput(Export(ExportFormat::kSft, dir->Join("new.jsonl"))).ok());
  EXPECT_TRUE(CheckExportOutput(Export(ExportFormat::kHf, dir->Join("new-folder"))).ok());
  EXPECT_EQ(*ReadFile(dir->Join("rows.jsonl")), "kept\n");
}

TEST(Export, AMistypedPromptFlagIsRefusedAndTheLastExportKept) {
  CorpusStore vault = Memory();
  ASSERT_TRUE(vault.Upsert(Kernel("relu", Task(1))).ok());
  auto dir = TempDir::Create("", "kvault-corpus-prompts");
  ASSERT_TRUE(dir.ok());
  const std::string out = dir->Join("sft.jsonl");
  ASSERT_TRUE(ExportRecords(vault, Export(ExportFormat::kSft, out)).ok());
  ASSERT_EQ(Rows(out).size(), 1u);
  struct Case {
    std::string root_suffix, version, hardware, said;
  } cases[] = {{"", "v1", "nosuch", "no hardware description 'nosuch'"},
               {"", "v1", "../cpu", "no hardware description '../cpu'"},
               {"", "v9", "", "no prompt version 'v9'"},
               {"-missing", "v1", "", "no prompts folder"}};
  for (const Case& c : cases) {
    ExportOptions o = Export(ExportFormat::kSft, out);
    o.prompts.root += c.root_suffix;
    o.prompts.version = c.version;
    o.prompts.hardware = c.hardware;
    auto summary = ExportRecords(vault, o);
    ASSERT_FALSE(summary.ok()) << c.said;
    EXPECT_NE(summary.error().find(c.said), std::string::npos) << summary.error();
    EXPECT_EQ(Rows(out).size(), 1u) << "the last export is gone after: " << c.said;
  }
  // What is there is named, so the typo can be put right.
  ExportOptions o = Export(ExportFormat::kSft, out);
  o.prompts.hardware = "mi300";
  EXPECT_NE(ExportRecords(vault, o).error().find("mi300x"), std::string::npos);
  o.prompts.hardware = "";
  o.prompts.version = "v2";
  EXPECT_NE(ExportRecords(vault, o).error().find("there: v1)"), std::string::npos);
  // The vault's own records render no prompt: nothing to check.
  o.format = ExportFormat::kRecords;
  o.output = dir->Join("records.jsonl");
  EXPECT_TRUE(ExportRecords(vault, o).ok());
}

TEST(ExportCard, LicenceIsTheHubsIdOrOtherWithANameAndUnstatedRowsAreCounted) {
  EXPECT_EQ(CardLicenceOf({{{"rocBLAS", "MIT"}, 3}, {{"other", "MIT"}, 1}}).license, "mit");
  EXPECT_EQ(HubLicenceId("GPL-3.0-only"), "gpl-3.0");
  EXPECT_EQ(HubLicenceId("BSD-2-Clause-Patent"), "");
  CardLicence own = CardLicenceOf({{{"lab", "Lab Research Licence v2"}, 2}});
  EXPECT_EQ(own.license, "other");
  EXPECT_EQ(own.name, "lab-research-licence-v2");
  CardLicence unknown = CardLicenceOf({{{"a", ""}, 2}, {{"b", "NOASSERTION"}, 1}});
  EXPECT_EQ(unknown.license, "unknown");
  EXPECT_EQ(unknown.unstated, 3);

  const SourceLicences mixed = {{{"rocBLAS", "MIT"}, 3}, {{"rocSOLVER", "BSD-2-Clause"}, 2}, {{"scraped", ""}, 4}};
  CardLicence l = CardLicenceOf(mixed);
  EXPECT_EQ(l.license, "other");
  EXPECT_EQ(l.name, "per-source");
  EXPECT_EQ(l.unstated, 4);
  const std::string card = DatasetCard(CorpusStats{}, ExportOptions{}, ExportSummary{}, mixed);
  EXPECT_EQ(card.rfind("---\nlicense: other\nlicense_name: per-source\nlicense_link: LICENSE.md\n", 0), 0u) << card;
  const std::string file = LicenceFile(mixed);
  EXPECT_NE(file.find("| rocSOLVER | BSD-2-Clause | 2 |"), std::string::npos) << file;
  EXPECT_NE(file.find("| scraped | unknown | 4 |"), std::string::npos) << file;
  EXPECT_NE(file.find("4 rows come from sources that state no licence"), std::string::npos) << file;

  // --licensed-only leaves out the records of unstated licence.
  KernelRecord mit = Kernel("relu", "ref\n"), none = Kernel("relu", "ref\n", "mismatch"),
               said_unknown = Kernel("relu", "ref\n", "");
  mit.provenance.license = "MIT";
  said_unknown.provenance.license = " Unknown ";
  CorpusStore vault = Memory();
  ASSERT_TRUE(vault.UpsertMany({mit, none, said_unknown}).ok());
  RecordFilter licensed;
  licensed.licensed_only = true;
  EXPECT_EQ(*vault.Count(licensed), 1);
  EXPECT_EQ(*vault.Count({}), 3);
}

}  // namespace
}  // namespace kvault::corpus
