#include "corpus/import.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include "corpus/export.h"
#include "store/generation_log.h"
#include "store/store.h"
#include "util/files.h"
#include "util/json_parse.h"
#include "util/sha256.h"

namespace kvault::corpus {
namespace {

std::string SourceRoot() {
  const char* root = std::getenv("KVAULT_SOURCE_ROOT");
  return root ? root : ".";
}

std::string Fixture(const std::string& name) { return SourceRoot() + "/tests/fixtures/corpus/" + name; }

ExportOptions Export(ExportFormat format, const std::string& output) {
  ExportOptions o;
  o.format = format;
  o.output = output;
  o.prompts.root = SourceRoot() + "/prompts";
  return o;
}

CorpusStore Memory() {
  auto v = CorpusStore::Open(":memory:");
  if (!v) throw std::runtime_error(v.error());
  return std::move(*v);
}

ImportReport Import(CorpusStore& vault, ImportFormat format, const std::string& path,
                    const std::string& suite = "") {
  ImportOptions o;
  o.format = format;
  o.suite = suite;
  auto r = ImportPaths(vault, o, {path});
  if (!r) throw std::runtime_error(r.error());
  return std::move(*r);
}

std::vector<KernelRecord> All(CorpusStore& vault) {
  std::vector<KernelRecord> out;
  EXPECT_TRUE(vault.ForEach({}, [&](const KernelRecord& r) {
                     out.push_back(r);
                     return true;
                   }).ok());
  return out;
}

std::vector<int64_t> Lines(const std::vector<ImportProblem>& problems) {
  std::vector<int64_t> out;
  for (const ImportProblem& p : problems) out.push_back(p.line);
  return out;
}

TEST(Import, SftSamplesWithMalformedLinesReportedByNumber) {
  CorpusStore vault = Memory();
  ImportReport r = Import(vault, ImportFormat::kSft, Fixture("sft.jsonl"));
  EXPECT_EQ(r.imported, 2);
  // 3: not JSON; 4: no assistant message; 6: two code blocks (5 is blank).
  EXPECT_EQ(Lines(r.malformed), (std::vector<int64_t>{3, 4, 6}));
  for (const ImportProblem& p : r.malformed) EXPECT_EQ(p.file, Fixture("sft.jsonl"));
  auto records = All(vault);
  ASSERT_EQ(records.size(), 2u);
  const KernelRecord& relu = records[0];
  EXPECT_EQ(relu.task.name, "relu");
  EXPECT_EQ(relu.language, "hip");
  EXPECT_EQ(relu.format, "extension");
  EXPECT_EQ(relu.task.reference_source, *ReadFile(Fixture("tasks/relu.py")));
  ASSERT_EQ(relu.results.size(), 1u);
  EXPECT_EQ(relu.results[0].status, "passed");
  EXPECT_EQ(relu.results[0].hardware, "AMD Instinct MI300X");
  EXPECT_DOUBLE_EQ(*relu.results[0].speedup, 1.2);
  EXPECT_EQ(relu.provenance.origin_line, 1);
  EXPECT_EQ(records[1].language, "cuda");
  EXPECT_EQ(records[1].results[0].status, "failed");
}

TEST(Import, AigV01TreeEachHipFileAKernel) {
  CorpusStore vault = Memory();
  ImportReport r = Import(vault, ImportFormat::kAigV01, Fixture("aig_v01"));
  EXPECT_EQ(r.imported, 2);  // hip_opt/1: two files
  ASSERT_EQ(r.malformed.size(), 2u);  // hip_opt/2: bad info.json; hip_opt/3: no reference
  EXPECT_NE(r.malformed[0].file.find("hip_opt/2/info.json"), std::string::npos);
  EXPECT_NE(r.malformed[1].why.find("py_3.py"), std::string::npos);
  for (const KernelRecord& k : All(vault)) {
    EXPECT_EQ(k.task.name, "relu");
    EXPECT_EQ(k.results.at(0).hardware, "AMD Instinct MI300X");
    EXPECT_EQ(k.provenance.pipeline, "aig-v0.1");
  }
}

TEST(Import, AigV02ElementsNumbered) {
  CorpusStore vault = Memory();
  ImportReport r = Import(vault, ImportFormat::kAigV02, Fixture("aig_v02.json"));
  EXPECT_EQ(r.imported, 2);
  EXPECT_EQ(Lines(r.malformed), (std::vector<int64_t>{3}));
  auto records = All(vault);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].provenance.source, "https://huggingface.co/datasets/AMD-AGI/AIG-Datasets");
  EXPECT_EQ(records[1].provenance.source, R"({"dataset":"AIG","item":2})");
  EXPECT_EQ(records[1].language, "cuda");
}

TEST(Import, KernelBenchFolderAgainstItsSuite) {
  CorpusStore vault = Memory();
  ImportReport r = Import(vault, ImportFormat::kKernelBench, Fixture("kernelbench"), Fixture("tasks"));
  EXPECT_EQ(r.imported, 2);  // relu.py, scale.sample_1.py
  ASSERT_EQ(r.malformed.size(), 1u);
  EXPECT_NE(r.malformed[0].file.find("scale.broken.py"), std::string::npos);
  ASSERT_EQ(r.skipped.size(), 1u);  // softmax: no such task
  for (const KernelRecord& k : All(vault)) {
    EXPECT_EQ(k.format, "kernelbench");
    EXPECT_FALSE(k.task.reference_source.empty());
  }
  ImportOptions no_suite;
  no_suite.format = ImportFormat::kKernelBench;
  EXPECT_FALSE(ImportPaths(vault, no_suite, {Fixture("kernelbench")}).ok());
}

TEST(Import, StoreAttemptsWithGenProvenanceAndParents) {
  auto dir = TempDir::Create("", "kvault-corpus-import");
  ASSERT_TRUE(dir.ok());
  const std::string db = dir->Join("kvault.db");
  const std::string reference = *ReadFile(Fixture("tasks/relu.py"));
  {
    auto store = Store::Open(db);
    auto log = GenerationLog::Open(db);
    ASSERT_TRUE(store.ok() && log.ok());
    for (const char* sample : {"iter1_0", "iter2_0"}) {
      AttemptRecord a;
      a.run = "g1";
      a.task = "relu";
      a.task_hash = Sha256Hex(reference);
      a.candidate_source = std::string("// ") + sample + "\n";
      a.candidate_hash = Sha256Hex(a.candidate_source);
      a.format = "extension";
      a.language = "cuda";
      a.backend = "cuda";
      a.status = "passed";
      a.speedup = 1.5;
      a.sample = sample;
      a.environment = {{"device", {{"name", "NVIDIA H200"}}}, {"toolchains", {{"nvcc", "12.4"}}}};
      ASSERT_TRUE((*store)->Put(a).ok());
      GenerationRecord g;
      g.run = "g1";
      g.task = "relu";
      g.iteration = sample[4] - '0';
      g.role = "generator";
      g.parent = std::string(sample) == "iter2_0" ? "iter1_0" : "";
      g.model_requested = "qwen3";
      g.prompt = Json::array({{{"role", "user"}, {"content", "make relu fast"}}});
      g.attempt_id = a.id;
      ASSERT_TRUE((*log)->Put(g).ok());
    }
    AttemptRecord infra;  // not the kernel's outcome: a record without a result
    infra.run = "e1";
    infra.task = "relu";
    infra.task_hash = Sha256Hex(reference);
    infra.candidate_source = "// other\n";
    infra.candidate_hash = Sha256Hex(infra.candidate_source);
    infra.status = "infra_error";
    ASSERT_TRUE((*store)->Put(infra).ok());
  }
  CorpusStore vault = Memory();
  ImportReport r = Import(vault, ImportFormat::kStore, db, Fixture("tasks"));
  EXPECT_EQ(r.imported, 3);
  auto records = All(vault);
  ASSERT_EQ(records.size(), 3u);
  const KernelRecord* first = nullptr;
  const KernelRecord* second = nullptr;
  for (const KernelRecord& k : records) {
    if (k.candidate_source == "// iter1_0\n") first = &k;
    if (k.candidate_source == "// iter2_0\n") second = &k;
    if (k.candidate_source == "// other\n") {
      EXPECT_TRUE(k.results.empty());
      EXPECT_EQ(k.provenance.pipeline, "eval");
    }
  }
  ASSERT_TRUE(first && second);
  EXPECT_EQ(second->provenance.pipeline, "gen");
  EXPECT_EQ(second->provenance.model, "qwen3");
  EXPECT_EQ(second->provenance.prompt, "make relu fast");
  EXPECT_EQ(second->provenance.parent_id, first->id);
  EXPECT_EQ(second->task.reference_source, reference);
  ASSERT_EQ(second->results.size(), 1u);
  EXPECT_EQ(second->results[0].hardware, "NVIDIA H200");
  EXPECT_EQ(second->results[0].toolchain, "nvcc 12.4");
}

// A serve run or a cluster campaign names its task `<label>-<hash12>`: the import
// names it as `kvault score` does, and finds its reference in the suite by content.
TEST(Import, StoreAttemptsNamedByServeGetTheSuitesTaskAndReference) {
  auto dir = TempDir::Create("", "kvault-corpus-import");
  ASSERT_TRUE(dir.ok());
  const std::string db = dir->Join("kvault.db");
  const std::string reference = *ReadFile(Fixture("tasks/relu.py"));
  {
    auto store = Store::Open(db);
    ASSERT_TRUE(store.ok());
    AttemptRecord a;
    a.run = "sweep1";
    a.task_hash = Sha256Hex(reference);
    a.task = "campaign-label-" + a.task_hash.substr(0, 12);
    a.candidate_source = "// from a campaign\n";
    a.candidate_hash = Sha256Hex(a.candidate_source);
    a.language = "cpp";
    a.status = "passed";
    ASSERT_TRUE((*store)->Put(a).ok());
  }
  CorpusStore with_suite = Memory();
  Import(with_suite, ImportFormat::kStore, db, Fixture("tasks"));
  auto records = All(with_suite);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].task.name, "relu");
  EXPECT_EQ(records[0].task.reference_source, reference);
  CorpusStore without_suite = Memory();
  Import(without_suite, ImportFormat::kStore, db);
  records = All(without_suite);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].task.name, "campaign-label");
  EXPECT_EQ(records[0].task.reference_source, "");
}

// import -> export -> import: the same records.
TEST(RoundTrip, RecordsExportGivesTheSameRecordsBack) {
  CorpusStore vault = Memory();
  Import(vault, ImportFormat::kSft, Fixture("sft.jsonl"));
  Import(vault, ImportFormat::kAigV01, Fixture("aig_v01"));
  auto dir = TempDir::Create("", "kvault-corpus-rt");
  ASSERT_TRUE(dir.ok());
  std::map<ExportFormat, std::string> files = {{ExportFormat::kRecords, dir->Join("r.jsonl")},
                                               {ExportFormat::kSft, dir->Join("s.jsonl")}};
  for (const auto& [format, path] : files) {
    ExportOptions o = Export(format, path);
    o.any_status = true;  // every record, whatever its claims
    auto summary = ExportRecords(vault, o);
    ASSERT_TRUE(summary.ok()) << summary.error();
    EXPECT_EQ(summary->rows, 3);  // sft's relu kernel is aig-v0.1's relu_v1.hip: one record
  }
  CorpusStore again = Memory();
  Import(again, ImportFormat::kRecords, files[ExportFormat::kRecords]);
  auto before = All(vault), after = All(again);
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(RecordToJson(before[i]), RecordToJson(after[i]));

  // SFT holds the task, kernel and results, not every provenance field.
  CorpusStore from_sft = Memory();
  ImportReport r = Import(from_sft, ImportFormat::kSft, files[ExportFormat::kSft]);
  EXPECT_TRUE(r.malformed.empty());
  auto sft = All(from_sft);
  ASSERT_EQ(sft.size(), before.size());
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(sft[i].id, before[i].id);
    EXPECT_EQ(RecordToJson(sft[i])["results"], RecordToJson(before[i])["results"]);
    EXPECT_EQ(sft[i].provenance.source, before[i].provenance.source);
  }
}

KernelRecord Contender(const std::string& source, const std::string& status, double speedup) {
  KernelRecord r;
  r.task.name = "relu";
  r.task.reference_source = "ref\n";
  r.candidate_source = source;
  r.language = "hip";
  r.format = "extension";
  VerificationResult v;
  v.hardware = "H200";
  v.status = status;
  v.speedup = speedup;
  v.origin = kOriginEngine;
  r.results = {v};
  FinishRecord(r);
  return r;
}

TEST(Export, DpoPairsTheFastestCorrectKernelWithSlowerAndWrongOnes) {
  CorpusStore vault = Memory();
  ASSERT_TRUE(vault.UpsertMany({Contender("slow", "passed", 1.1), Contender("fast", "passed", 2.0),
                                Contender("wrong", "mismatch", 0)}).ok());
  auto dir = TempDir::Create("", "kvault-corpus-dpo");
  ExportOptions o = Export(ExportFormat::kDpo, dir->Join("dpo.jsonl"));
  auto summary = ExportRecords(vault, o);
  ASSERT_TRUE(summary.ok()) << summary.error();
  EXPECT_EQ(summary->rows, 2);
  std::ifstream in(o.output);
  std::string line;
  std::set<std::string> rejected;
  while (std::getline(in, line)) {
    Json row = *ParseJson(line);
    EXPECT_NE(row["chosen"].get<std::string>().find("fast"), std::string::npos);
    rejected.insert(row["metadata"]["rejected_status"].get<std::string>());
  }
  EXPECT_EQ(rejected, (std::set<std::string>{"passed", "mismatch"}));
}

TEST(Export, DpoSaysWhyAKernelHasNoPair) {
  KernelRecord unverified = Contender("hip unverified", "passed", 3.0);
  unverified.results[0].origin = kOriginImport;  // a claim: no verdict of this vault's engine
  FinishRecord(unverified);
  KernelRecord lonely = Contender("softmax wrong", "mismatch", 0);
  lonely.task.name = "softmax";
  FinishRecord(lonely);
  CorpusStore vault = Memory();
  ASSERT_TRUE(vault.UpsertMany({Contender("hip fast", "passed", 2.0), Contender("hip wrong", "mismatch", 0),
                                unverified, lonely}).ok());
  auto dir = TempDir::Create("", "kvault-corpus-dpo");
  auto summary = ExportRecords(vault, Export(ExportFormat::kDpo, dir->Join("dpo.jsonl")));
  ASSERT_TRUE(summary.ok()) << summary.error();
  EXPECT_EQ(summary->rows, 1);
  EXPECT_EQ(summary->skipped, 2);
  ASSERT_EQ(summary->skipped_why.size(), 2u);
  std::string why = summary->skipped_why[0] + "\n" + summary->skipped_why[1];
  EXPECT_NE(why.find("record " + unverified.id + ": no result of this vault's engine"), std::string::npos) << why;
  EXPECT_NE(why.find("record " + lonely.id + ": no kernel of its task passed"), std::string::npos) << why;
}

TEST(Export, DpoPairsOnlyKernelsThatAnswerTheSamePrompt) {
  // A correct HIP kernel and a wrong Triton one of the same task answer two prompts
  // (two file contracts): no pair. A wrong HIP kernel is paired with the HIP one.
  KernelRecord triton = Contender("import triton  # wrong\n", "mismatch", 0);
  triton.language = "triton";
  triton.format = "triton";
  FinishRecord(triton);
  CorpusStore vault = Memory();
  ASSERT_TRUE(vault.UpsertMany({Contender("hip fast", "passed", 2.0), triton, Contender("hip wrong", "mismatch", 0)}).ok());
  auto dir = TempDir::Create("", "kvault-corpus-dpo");
  ExportOptions o = Export(ExportFormat::kDpo, dir->Join("dpo.jsonl"));
  auto summary = ExportRecords(vault, o);
  ASSERT_TRUE(summary.ok()) << summary.error();
  EXPECT_EQ(summary->rows, 1);
  std::ifstream in(o.output);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  Json row = *ParseJson(line);
  EXPECT_NE(row["rejected"].get<std::string>().find("hip wrong"), std::string::npos);
  EXPECT_NE(row["system"].get<std::string>().find("`hip`"), std::string::npos);
  // --chat: TRL's conversational preference rows, the same prompt as chat turns.
  o.chat = true;
  ASSERT_TRUE(ExportRecords(vault, o).ok());
  std::ifstream chat(o.output);
  ASSERT_TRUE(std::getline(chat, line));
  Json turns = *ParseJson(line);
  ASSERT_EQ(turns["prompt"].size(), 2u);
  EXPECT_EQ(turns["prompt"][0]["role"], "system");
  EXPECT_EQ(turns["prompt"][0]["content"], row["system"]);
  EXPECT_EQ(turns["prompt"][1]["content"], row["prompt"]);
  EXPECT_EQ(turns["chosen"][0]["role"], "assistant");
  EXPECT_EQ(turns["rejected"][0]["content"], row["rejected"]);
  EXPECT_FALSE(turns.contains("system"));
}

TEST(Export, VerlRowCarriesAmdGroundTruthAndSkipsWhatItCannotHold) {
  KernelRecord r = Contender("__global__ void k() {}\n", "passed", 2.0);
  RecordFilter filter;
  RowContext context{filter, {"system text", "user text", "v1"}, false};
  auto row = VerlRow(r, context, 7);
  ASSERT_TRUE(row.has_value());
  const Json& truth = (*row)["reward_model"]["ground_truth"];
  EXPECT_EQ(truth["pytorch_module_code"], "ref\n");
  EXPECT_EQ(truth["hip_code"], r.candidate_source);
  EXPECT_EQ((*row)["prompt"][0]["role"], "system");
  EXPECT_EQ((*row)["prompt"][1]["content"], "user text");
  EXPECT_EQ((*row)["extra_info"]["index"], 7);
  r.task.reference_source.clear();
  EXPECT_FALSE(VerlRow(r, context, 0).has_value());
}

TEST(Import, VerlRowsInJsonLines) {
  CorpusStore vault = Memory();
  ImportReport r = Import(vault, ImportFormat::kVerl, Fixture("verl_rows.jsonl"));
  EXPECT_EQ(r.imported, 1);
  EXPECT_EQ(r.skipped.size(), 1u);  // the task-only row
  EXPECT_EQ(Lines(r.malformed), (std::vector<int64_t>{3}));
}

TEST(Import, APathThatHoldsNoRowIsNamed) {
  auto dir = TempDir::Create("", "kvault-corpus-empty");
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(WriteFileAtomic(dir->Join("empty.jsonl"), "").ok());
  ASSERT_TRUE(WriteFileAtomic(dir->Join("one.jsonl"), "{\"messages\": 1}\n").ok());
  CorpusStore vault = Memory();
  ImportOptions o;
  o.format = ImportFormat::kSft;
  auto r = ImportPaths(vault, o, {dir->Join("empty.jsonl"), dir->Join("one.jsonl")});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->empty_paths, std::vector<std::string>{dir->Join("empty.jsonl")});  // one.jsonl: a malformed row
  EXPECT_EQ(r->malformed.size(), 1u);
  EXPECT_EQ(r->ToJson()["empty_paths"].size(), 1u);
}

TEST(Import, VerlRowWhoseKernelIsNoTextIsMalformedNotTaskOnly) {
  auto dir = TempDir::Create("", "kvault-corpus-verl");
  ASSERT_TRUE(dir.ok());
  const std::string rows =
      R"({"reward_model": {"ground_truth": {"pytorch_module_code": "ref", "kernel_name": "t", "hip_code": 42}}})"
      "\n"
      R"({"reward_model": {"ground_truth": {"pytorch_module_code": "ref", "kernel_name": "t"}}})"
      "\n";
  ASSERT_TRUE(WriteFileAtomic(dir->Join("rows.jsonl"), rows).ok());
  CorpusStore vault = Memory();
  ImportReport r = Import(vault, ImportFormat::kVerl, dir->Join("rows.jsonl"));
  EXPECT_EQ(r.imported, 0);
  ASSERT_EQ(r.malformed.size(), 1u);
  EXPECT_EQ(r.malformed[0].line, 1);
  EXPECT_NE(r.malformed[0].why.find("hip_code: not a string"), std::string::npos) << r.malformed[0].why;
  ASSERT_EQ(r.skipped.size(), 1u);  // a task-only row
  EXPECT_EQ(r.skipped[0].line, 2);
}

TEST(Import, BadPathsAndWrongTypesAreSaidAndImportNothing) {
  auto dir = TempDir::Create("", "kvault-corpus-bad");
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(EnsureDir(dir->Join("folder")).ok());
  ASSERT_TRUE(WriteFileAtomic(dir->Join("text.parquet"), "<html>not found</html>\n").ok());
  ASSERT_TRUE(WriteFileAtomic(dir->Join("typed.jsonl"),
                              R"({"reward_model": {"ground_truth": {"kernel_name": "t", "hip_code": "k1"}},)"
                              R"( "extra_info": {"pass_exe": "yes"}})"
                              "\n"
                              R"({"reward_model": {"ground_truth": {"kernel_name": "t", "hip_code": "k2"}},)"
                              R"( "extra_info": {"pass_exe": true, "speedup": "fast"}})"
                              "\n"
                              R"({"reward_model": {"ground_truth": {"kernel_name": 7, "hip_code": "k3"}}})"
                              "\n"
                              R"({"prompt": "text", "reward_model": {"ground_truth": {"hip_code": "k4"}}})"
                              "\n"
                              R"({"reward_model": {"ground_truth": {"kernel_name": "t", "hip_code": "k5"}},)"
                              R"( "extra_info": {"pass_exe": false, "speedup": null}})"
                              "\n"
                              // reward_model and extra_info as JSON text, as a Parquet column may hold them
                              R"({"reward_model": "{\"ground_truth\": {\"kernel_name\": \"t\", \"hip_code\": \"k6\"}}",)"
                              R"( "extra_info": "{\"pass_exe\": true}"})"
                              "\n"
                              R"({"reward_model": {"ground_truth": {"kernel_name": "t", "hip_code": "k7"}}, "extra_info": 3})"
                              "\n")
                  .ok());
  CorpusStore vault = Memory();
  ASSERT_TRUE(vault.UpsertMany({Contender("kept", "passed", 1.0)}).ok());
  ImportOptions o;
  o.format = ImportFormat::kVerl;
  // Every path is checked first: a good file before a bad path imports nothing.
  for (auto [path, why] : {std::pair{dir->Join("folder"), "a folder (--from verl reads a file"},
                           std::pair{dir->Join("missing.parquet"), "no such file or folder"},
                           std::pair{dir->Join("text.parquet"), "not a Parquet file"}}) {
    auto r = ImportPaths(vault, o, {dir->Join("typed.jsonl"), path});
    ASSERT_FALSE(r.ok()) << path;
    EXPECT_NE(r.error().find(why), std::string::npos) << r.error();
    EXPECT_EQ(All(vault).size(), 1u) << path;
  }
  o.format = ImportFormat::kKernelBench;
  auto not_folder = ImportPaths(vault, o, {dir->Join("typed.jsonl")});
  ASSERT_FALSE(not_folder.ok());
  EXPECT_NE(not_folder.error().find("not a folder"), std::string::npos) << not_folder.error();
  // A field of the wrong type is a malformed row that says which, not a value dropped.
  ImportReport r = Import(vault, ImportFormat::kVerl, dir->Join("typed.jsonl"));
  EXPECT_EQ(r.imported, 2);  // k5: null is "not given"; k6
  ASSERT_EQ(r.malformed.size(), 5u);
  EXPECT_EQ(r.malformed[4].why, "extra_info: not an object (or its JSON text)");
  EXPECT_EQ(r.malformed[0].why, "extra_info.pass_exe: not true or false");
  EXPECT_EQ(r.malformed[1].why, "extra_info.speedup: not a number");
  EXPECT_EQ(r.malformed[2].why, "reward_model.ground_truth.kernel_name: not text");
  EXPECT_EQ(r.malformed[3].why, "prompt: not a list of messages");
  EXPECT_EQ(All(vault).size(), 3u);
  ASSERT_TRUE(WriteFileAtomic(dir->Join("sft.jsonl"),
                              R"({"messages": [{"role": "assistant", "content": "```cuda\nk\n```"}], "metadata": 5})"
                              "\n")
                  .ok());
  ImportReport sft = Import(vault, ImportFormat::kSft, dir->Join("sft.jsonl"));
  ASSERT_EQ(sft.malformed.size(), 1u);
  EXPECT_EQ(sft.malformed[0].why, "metadata: not an object");
  ASSERT_TRUE(WriteFileAtomic(dir->Join("aig.jsonl"), R"({"answer_code": ["k"]})" "\n").ok());
  ImportReport aig = Import(vault, ImportFormat::kAigV02, dir->Join("aig.jsonl"));
  ASSERT_EQ(aig.malformed.size(), 1u);
  EXPECT_EQ(aig.malformed[0].why, "answer_code: not text");
}

TEST(Import, ARowNamingItselfAsParentIsMalformed) {
  auto dir = TempDir::Create("", "kvault-corpus-parent");
  ASSERT_TRUE(dir.ok());
  KernelRecord r = Contender("k", "passed", 1.0);
  r.provenance.origin_file = "first/seen/here.jsonl";  // kept; reports name the row read
  r.provenance.origin_line = 9;
  KernelRecord fine = r;
  fine.candidate_source += "// another\n";
  r.provenance.parent_id = r.id;
  KernelRecord shouting = r;  // its own id in capitals: the same self-parent
  shouting.candidate_source += "// and again\n";
  FinishRecord(shouting);
  shouting.provenance.parent_id = shouting.id;
  std::transform(shouting.provenance.parent_id.begin(), shouting.provenance.parent_id.end(),
                 shouting.provenance.parent_id.begin(), [](unsigned char c) { return std::toupper(c); });
  ASSERT_TRUE(WriteFileAtomic(dir->Join("self.jsonl"), DumpJson(RecordToJson(fine)) + "\n" +
                                                           DumpJson(RecordToJson(r)) + "\n" +
                                                           DumpJson(RecordToJson(shouting)) + "\n")
                  .ok());
  CorpusStore vault = Memory();
  ImportReport report = Import(vault, ImportFormat::kRecords, dir->Join("self.jsonl"));
  EXPECT_EQ(report.imported, 1);
  ASSERT_EQ(report.malformed.size(), 2u);
  EXPECT_NE(report.malformed[0].why.find("parent_id"), std::string::npos);
  EXPECT_EQ(report.malformed[0].file, dir->Join("self.jsonl"));
  EXPECT_EQ(report.malformed[0].line, 2);
  EXPECT_EQ(report.malformed[1].line, 3);
  std::vector<KernelRecord> kept;
  ASSERT_TRUE(vault.ForEach({}, [&](const KernelRecord& k) { kept.push_back(k); return true; }).ok());
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].provenance.origin_file, "first/seen/here.jsonl");
  EXPECT_EQ(kept[0].provenance.origin_line, 9);
}

TEST(Export, DpoPairsANearMissWithItsPositiveAndStatesNoSpeedForAWrongKernel) {
  CorpusStore vault = Memory();
  KernelRecord fast = Contender("fast", "passed", 2.0), close = Contender("close", "passed", 1.5);
  KernelRecord miss = Contender("close but wrong", "mismatch", 0);
  ASSERT_TRUE(vault.UpsertMany({fast, close, miss}).ok());
  ASSERT_TRUE(vault.SetDuplicates({{miss.id, close.id, "near_miss"}}).ok());
  auto dir = TempDir::Create("", "kvault-corpus-dpo");
  ExportOptions o = Export(ExportFormat::kDpo, dir->Join("dpo.jsonl"));
  o.filter.include_duplicates = false;  // near misses stay
  auto summary = ExportRecords(vault, o);
  ASSERT_TRUE(summary.ok()) << summary.error();
  EXPECT_EQ(summary->rows, 2);  // close against fast, the miss against close
  std::ifstream in(o.output);
  std::string line;
  bool paired = false;
  while (std::getline(in, line)) {
    Json row = *ParseJson(line);
    EXPECT_FALSE(row["system"].get<std::string>().empty());
    if (row["metadata"]["rejected_id"] != miss.id) continue;
    paired = true;
    EXPECT_EQ(row["metadata"]["chosen_id"], close.id);
    EXPECT_TRUE(row["metadata"]["near_miss"].get<bool>());
    EXPECT_TRUE(row["metadata"]["rejected_speedup"].is_null());
  }
  EXPECT_TRUE(paired);
}

TEST(Export, PromptsAreGensAndPublishLeavesOutTheMachine) {
  KernelRecord r = Contender("__global__ void k() {}\n", "passed", 2.0);
  r.results[0].environment = {{"host", "build-node-7"}, {"cache", "/home/someone/.cache/kvault"}};
  r.provenance.origin_file = "/home/someone/data/rows.jsonl";
  r.provenance.model = "/home/someone/models/Coder-7B/";  // a server's local model path
  // gen's later prompts quote the compiler: the candidate's path, the build's flags.
  r.provenance.prompt = "Compiler output:\n/home/someone/run/gen/relu/iter1_0.cu:7:3: error: x\n"
                        "g++ -isystem /tmp/kvault-cache/pch/ab/include -o ~/out/k.so\n";
  ExportPrompts prompts({.root = SourceRoot() + "/prompts", .version = "v1", .hardware = ""});
  auto p = prompts.Of(r);
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_NE(p->system.find("MI300X"), std::string::npos);  // hip: gen's default target
  EXPECT_NE(p->system.find("exactly one fenced code block tagged `hip`"), std::string::npos);
  EXPECT_EQ(p->user.rfind("task: relu\nrole: generator\niteration: 1\n", 0), 0u);
  EXPECT_NE(p->user.find("```python\nref\n"), std::string::npos);
  RecordFilter filter;
  RowContext published{filter, *p, true}, kept{filter, *p, false};
  const std::string row = DumpJson(SftRow(r, published)) + DumpJson(HfRow(r, published));
  EXPECT_EQ(row.find("build-node-7"), std::string::npos);
  EXPECT_EQ(row.find("/home/someone"), std::string::npos);
  EXPECT_NE(DumpJson(SftRow(r, kept)).find("build-node-7"), std::string::npos);
  EXPECT_EQ(row.find("/tmp/"), std::string::npos);
  EXPECT_EQ(row.find("~/"), std::string::npos);
  const Json provenance = *ParseJson(HfRow(r, published)["provenance"].get<std::string>());
  EXPECT_NE(provenance["prompt"].get<std::string>().find("iter1_0.cu:7:3: error: x\n"), std::string::npos);
  EXPECT_EQ(PublicText("see https://example.org/a/b and x / y, a // comment, /* c */ ok"),
            "see https://example.org/a/b and x / y, a // comment, /* c */ ok");
  EXPECT_EQ(PublicText("(/usr/include/python3.11/Python.h)"), "(Python.h)");
  EXPECT_EQ(SftRow(r, published)["metadata"]["model"], "Coder-7B");
  EXPECT_EQ(PublicModel("Qwen/Qwen2.5-Coder-7B"), "Qwen/Qwen2.5-Coder-7B");  // a hub id stays
  EXPECT_EQ(PublicModel("gpt-4o"), "gpt-4o");
  EXPECT_EQ(PublicModel("./ckpt/step-900"), "step-900");
  EXPECT_EQ(SftRow(r, published)["messages"][0]["role"], "system");
  r.format = "no-such-format";
  auto missing = prompts.Of(r);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("no-such-format"), std::string::npos);
  // In an export that record is left out, with its reason; the others are written.
  CorpusStore vault = Memory();
  FinishRecord(r);
  ASSERT_TRUE(vault.UpsertMany({r, Contender("fine", "passed", 1.0)}).ok());
  auto dir = TempDir::Create("", "kvault-corpus-prompt");
  auto summary = ExportRecords(vault, Export(ExportFormat::kSft, dir->Join("sft.jsonl")));
  ASSERT_TRUE(summary.ok()) << summary.error();
  EXPECT_EQ(summary->rows, 1);
  EXPECT_EQ(summary->skipped, 1);
  ASSERT_EQ(summary->skipped_why.size(), 1u);
  EXPECT_NE(summary->skipped_why[0].find("no-such-format"), std::string::npos);
}

}  // namespace
}  // namespace kvault::corpus
