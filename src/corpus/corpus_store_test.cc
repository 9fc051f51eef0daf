#include "corpus/corpus_store.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "store/sqlite.h"
#include "util/files.h"

namespace kvault::corpus {
namespace {

KernelRecord Kernel(const std::string& task, const std::string& source) {
  KernelRecord r;
  r.task.name = task;
  r.task.reference_source = "class Model: # " + task + "\n";
  r.candidate_source = source;
  r.language = "hip";
  r.format = "extension";
  r.provenance.pipeline = "test";
  FinishRecord(r);
  return r;
}

VerificationResult Result(const std::string& hardware, const std::string& status, double speedup) {
  VerificationResult v;
  v.hardware = hardware;
  v.toolchain = "hipcc 6.2";
  v.backend = "hip";
  v.status = status;
  v.speedup = speedup;
  v.verified_at = "2026-12-01T00:00:00.000Z";
  v.origin = kOriginEngine;  // as `corpus verify` adds them
  return v;
}

std::vector<KernelRecord> All(CorpusStore& vault, const RecordFilter& f = {}) {
  std::vector<KernelRecord> out;
  Status s = vault.ForEach(f, [&](const KernelRecord& r) {
    out.push_back(r);
    return true;
  });
  EXPECT_TRUE(s.ok()) << s.error();
  return out;
}

CorpusStore OpenMemory() {
  auto vault = CorpusStore::Open(":memory:");
  if (!vault) throw std::runtime_error(vault.error());
  return std::move(*vault);
}

TEST(CorpusStore, UpsertKeepsEveryFieldAndMergesResults) {
  CorpusStore vault = OpenMemory();
  KernelRecord r = Kernel("relu", "__global__ void k() {}\n");
  r.arch = "gfx942";
  r.provenance = {"gen", "qwen", "write relu", "parent1", "AMD-AGI/x", "MIT", "a.jsonl", 7};
  r.results = {Result("MI300X", "passed", 1.5)};
  ASSERT_TRUE(vault.Upsert(r).ok());
  r.results = {Result("H200", "mismatch", 0)};
  ASSERT_TRUE(vault.Upsert(r).ok());
  auto got = vault.Get(r.id);
  ASSERT_TRUE(got.ok() && got->has_value());
  const KernelRecord& g = **got;
  EXPECT_EQ(RecordToJson(g)["provenance"], RecordToJson(r)["provenance"]);
  EXPECT_EQ(g.task.reference_source, r.task.reference_source);
  EXPECT_EQ(g.arch, "gfx942");
  ASSERT_EQ(g.results.size(), 2u);  // one per hardware
  EXPECT_EQ(All(vault).size(), 1u);
}

TEST(CorpusStore, AReimportKeepsWhatItsRowLeavesEmpty) {
  CorpusStore vault = OpenMemory();
  KernelRecord r = Kernel("relu", "__global__ void k() {}\n");
  r.arch = "gfx942";
  r.provenance = {"gen", "qwen", "write relu", "", "AMD-AGI/x", "MIT", "a.jsonl", 7};
  ASSERT_TRUE(vault.Upsert(r).ok());
  KernelRecord again = Kernel("relu", "__global__ void k() {}\n");  // same content, nothing known
  again.provenance = {"", "", "", "", "", "", "b.jsonl", 3};
  ASSERT_TRUE(vault.Upsert(again).ok());
  auto rows = All(vault);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].arch, "gfx942");
  EXPECT_EQ(rows[0].provenance.pipeline, "gen");
  EXPECT_EQ(rows[0].provenance.model, "qwen");
  EXPECT_EQ(rows[0].provenance.prompt, "write relu");
  EXPECT_EQ(rows[0].provenance.source, "AMD-AGI/x");
  EXPECT_EQ(rows[0].provenance.license, "MIT");
  EXPECT_EQ(rows[0].provenance.origin_file, "b.jsonl");  // where it was read last
  EXPECT_EQ(rows[0].provenance.origin_line, 3);
  KernelRecord relicensed = again;  // a row that states a licence replaces it
  relicensed.provenance.license = "Apache-2.0";
  ASSERT_TRUE(vault.Upsert(relicensed).ok());
  EXPECT_EQ(All(vault)[0].provenance.license, "Apache-2.0");
}

TEST(CorpusStore, IdDependsOnContentNotProvenance) {
  KernelRecord a = Kernel("relu", "x");
  KernelRecord b = a;
  b.provenance.model = "other";
  FinishRecord(b);
  EXPECT_EQ(a.id, b.id);
  b.language = "cuda";
  FinishRecord(b);
  EXPECT_NE(a.id, b.id);
}

TEST(CorpusStore, FilterAppliesToOneResultAndToMarks) {
  CorpusStore vault = OpenMemory();
  KernelRecord fast = Kernel("relu", "fast");
  fast.results = {Result("H200", "passed", 3.0)};
  KernelRecord slow = Kernel("relu", "slow");
  slow.results = {Result("H200", "passed", 0.5), Result("MI300X", "mismatch", 4.0)};
  KernelRecord qa;
  qa.kind = kKindQa;
  qa.qa = {"What does axpy do?", "y = a*x + y", "axpy.cpp:1-3"};
  ASSERT_TRUE(vault.UpsertMany({fast, slow, qa}).ok());

  RecordFilter f;
  f.status = "passed";
  f.min_speedup = 1.0;  // slow's 4.0 is a mismatch: not the same result
  auto got = All(vault, f);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].candidate_source, "fast");
  RecordFilter qa_only;
  qa_only.kind = "qa";
  EXPECT_EQ(*vault.Count(qa_only), 1);

  ASSERT_TRUE(vault.SetDuplicates({{slow.id, fast.id, "near"}}).ok());
  ASSERT_TRUE(vault.SetContamination({{fast.id, "relu", "ngram", 0.9}}, "kernelbench").ok());
  RecordFilter clean;
  clean.include_duplicates = false;
  clean.decontaminated_only = true;
  got = All(vault, clean);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].kind, "qa");
  auto f2 = vault.Get(fast.id);
  ASSERT_EQ((*f2)->contamination.size(), 1u);
  EXPECT_EQ((*f2)->contamination[0].suite, "kernelbench");

  // Replacing marks: the new lists are all that remain.
  ASSERT_TRUE(vault.SetDuplicates({}).ok());
  ASSERT_TRUE(vault.SetContamination({}, "kernelbench").ok());
  EXPECT_EQ(All(vault, clean).size(), 3u);
}

TEST(CorpusStore, MarksOfUnknownRecordsChangeNothing) {
  CorpusStore vault = OpenMemory();
  KernelRecord a = Kernel("relu", "a");
  KernelRecord b = Kernel("relu", "b");
  ASSERT_TRUE(vault.UpsertMany({a, b}).ok());
  ASSERT_TRUE(vault.SetDuplicates({{b.id, a.id, "exact"}}).ok());
  EXPECT_FALSE(vault.SetDuplicates({{a.id, b.id, "exact"}, {"nope", a.id, "exact"}}).ok());
  EXPECT_EQ((*vault.Get(b.id))->duplicate_of, a.id);  // the failed call rolled back
  EXPECT_EQ((*vault.Get(a.id))->duplicate_of, "");
}

TEST(CorpusStore, ResumeSeesResultsPerHardwareAndToolchain) {
  CorpusStore vault = OpenMemory();
  KernelRecord a = Kernel("relu", "a");
  ASSERT_TRUE(vault.Upsert(a).ok());
  ASSERT_TRUE(vault.AddResult(a.id, Result("H200", "passed", 2)).ok());
  EXPECT_TRUE(*vault.HasResult(a.id, "H200", "hipcc 6.2"));
  EXPECT_FALSE(*vault.HasResult(a.id, "H200", "nvcc 12.4"));
  EXPECT_FALSE(*vault.HasResult(a.id, "MI300X", "hipcc 6.2"));
}

TEST(CorpusStore, RefusesForeignAndReopensItsOwnFile) {
  auto dir = TempDir::Create("", "kvault-vault-test");
  ASSERT_TRUE(dir.ok());
  const std::string path = dir->path() + "/vault.db";
  {
    auto vault = CorpusStore::Open(path);
    ASSERT_TRUE(vault.ok()) << vault.error();
    ASSERT_TRUE(vault->Upsert(Kernel("relu", "a")).ok());
  }
  auto again = CorpusStore::Open(path);
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(*again->Count({}), 1);
  const std::string junk = dir->path() + "/junk.db";
  ASSERT_TRUE(WriteFileAtomic(junk, "not sqlite at all, just text").ok());
  auto bad = CorpusStore::Open(junk);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("junk.db"), std::string::npos);
}

TEST(CorpusStore, AVersionOneVaultMigratesItsResultsAsClaims) {
  auto dir = TempDir::Create("", "kvault-vault-test");
  ASSERT_TRUE(dir.ok());
  const std::string path = dir->path() + "/vault.db";
  KernelRecord r = Kernel("relu", "a");
  r.results = {Result("H200", "passed", 2.0)};
  {
    auto vault = CorpusStore::Open(path);
    ASSERT_TRUE(vault.ok()) << vault.error();
    ASSERT_TRUE(vault->Upsert(r).ok());
  }
  {  // back to version 1's results table, as an older build left it
    auto db = sqlite::Connection::Open(path, 1000);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->Exec("CREATE TABLE old AS SELECT record_id, hardware, toolchain, backend, status, speedup, "
                         "reference_ms, candidate_ms, environment, verified_at FROM results; DROP TABLE results; "
                         "ALTER TABLE old RENAME TO results; UPDATE kvault_vault_schema SET version = 1;")
                    .ok());
  }
  auto vault = CorpusStore::Open(path);
  ASSERT_TRUE(vault.ok()) << vault.error();
  auto got = vault->Get(r.id);
  ASSERT_TRUE(got.ok() && got->has_value());
  ASSERT_EQ((*got)->results.size(), 1u);
  EXPECT_EQ((*got)->results[0].origin, kOriginImport);  // its origin cannot be told: a claim
  EXPECT_DOUBLE_EQ(*(*got)->results[0].speedup, 2.0);
  EXPECT_EQ(BestResult(**got), nullptr);
}

TEST(CorpusStore, RejectsRecordsWithoutTheirKey) {
  CorpusStore vault = OpenMemory();
  KernelRecord nameless = Kernel("", "a");
  EXPECT_FALSE(vault.Upsert(nameless).ok());
  KernelRecord qa;
  qa.kind = kKindQa;
  EXPECT_FALSE(vault.Upsert(qa).ok());
}

TEST(Record, JsonRoundTripIsExact) {
  KernelRecord r = Kernel("relu", std::string("a\0b", 3));
  r.provenance = {"gen", "m", "p", "parent", "src", "MIT", "f.jsonl", 3};
  r.results = {Result("H200", "passed", 2.5)};
  r.results[0].environment = {{"torch", "2.5"}};
  r.results[0].origin = kOriginImport;  // what a file can carry
  r.results[0].claim = "f.jsonl:3";
  r.duplicate_of = "x";
  r.duplicate_kind = "near";
  r.contamination = {{"kb", "19_ReLU", "signature", 1.0}};
  auto back = RecordFromJson(RecordToJson(r));
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(RecordToJson(*back), RecordToJson(r));
  Json wrong = RecordToJson(r);
  wrong["provenance"]["origin_line"] = "seven";
  auto bad = RecordFromJson(wrong);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("provenance.origin_line"), std::string::npos);
  // A file that says its result came from the engine is read as a claim all the same.
  Json forged = RecordToJson(r);
  forged["results"][0]["origin"] = kOriginEngine;
  auto claimed = RecordFromJson(forged);
  ASSERT_TRUE(claimed.ok());
  EXPECT_EQ(claimed->results[0].origin, kOriginImport);
}

TEST(Claims, AnImportedVerdictNeverReplacesNorCountsAsTheEnginesResult) {
  CorpusStore vault = OpenMemory();
  KernelRecord zeros = Kernel("relu", "returns zeros");
  zeros.results = {Result("H200", "mismatch", 0)};  // what the engine saw
  ASSERT_TRUE(vault.Upsert(zeros).ok());
  VerificationResult claim = Result("H200", "passed", 3.7);  // the same key, claimed
  claim.origin = kOriginImport;
  claim.claim = "hostile.jsonl:1";
  KernelRecord again = zeros;
  again.results = {claim};
  ASSERT_TRUE(vault.Upsert(again).ok());
  auto got = vault.Get(zeros.id);
  ASSERT_TRUE(got.ok() && got->has_value());
  ASSERT_EQ((*got)->results.size(), 2u);  // both kept, apart
  ASSERT_NE(BestResult(**got), nullptr);
  EXPECT_EQ(BestResult(**got)->status, "mismatch");
  EXPECT_EQ(BestResult(**got, /*count_claims=*/true)->status, "passed");
  EXPECT_FALSE(RecordSpeed(**got, "", false).median.has_value());
  RecordFilter passed;
  passed.status = "passed";
  EXPECT_EQ(*vault.Count(passed), 0);
  passed.count_claims = true;
  EXPECT_EQ(*vault.Count(passed), 1);
  // A claim alone does not make verify skip the record.
  KernelRecord claimed_only = Kernel("relu", "claimed only");
  claimed_only.results = {claim};
  ASSERT_TRUE(vault.Upsert(claimed_only).ok());
  EXPECT_FALSE(*vault.HasResult(claimed_only.id, "H200", "hipcc 6.2"));
}

TEST(Claims, ARecordIsNotItsOwnParent) {
  CorpusStore vault = OpenMemory();
  KernelRecord r = Kernel("relu", "x");
  r.provenance.parent_id = r.id;
  Status s = vault.Upsert(r);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("parent_id"), std::string::npos);
}

TEST(Record, SpeedIsTheMedianOfPassedResultsWithItsCount) {
  KernelRecord r = Kernel("relu", "x");
  r.results = {Result("a", "passed", 0.92), Result("b", "passed", 0.53), Result("c", "passed", 0.64),
               Result("d", "mismatch", 9)};
  SpeedStat s = RecordSpeed(r, "", false);
  ASSERT_TRUE(s.median.has_value());
  EXPECT_DOUBLE_EQ(*s.median, 0.64);
  EXPECT_EQ(s.samples, 3);
  EXPECT_EQ(RecordSpeed(r, "b", false).samples, 1);
  r.results.pop_back();
  r.results.pop_back();
  EXPECT_DOUBLE_EQ(*RecordSpeed(r, "", false).median, (0.92 + 0.53) / 2);
}

TEST(Record, BestResultPrefersCorrectThenFaster) {
  KernelRecord r;
  EXPECT_EQ(BestResult(r), nullptr);
  r.results = {Result("a", "mismatch", 9), Result("b", "passed", 1.2), Result("c", "passed", 2)};
  ASSERT_NE(BestResult(r), nullptr);
  EXPECT_EQ(BestResult(r)->hardware, "c");
}

}  // namespace
}  // namespace kvault::corpus
