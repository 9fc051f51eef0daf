#include "corpus/qa_mine.h"

#include <gtest/gtest.h>

#include <deque>

#include "util/env.h"
#include "util/files.h"
#include "kvault/build_config.h"

namespace kvault::corpus {
namespace {

std::string TreeRoot() {
  std::string root = GetEnv("KVAULT_SOURCE_ROOT").value_or(KVAULT_DEFAULT_SOURCE_ROOT);
  return root + "/tests/fixtures/corpus_curate/qa_tree";
}

// Answers from a script; an Error where the script says "!dead".
class ScriptedClient : public llm::ChatClient {
 public:
  explicit ScriptedClient(std::deque<std::string> answers) : answers_(std::move(answers)) {}
  Result<llm::ChatResponse> Complete(const llm::ChatRequest& request) override {
    requests.push_back(request);
    if (answers_.empty() || answers_.front() == "!dead") return Error{"connection refused"};
    llm::ChatResponse r;
    r.content = answers_.front();
    answers_.pop_front();
    return r;
  }
  std::vector<llm::ChatRequest> requests;

 private:
  std::deque<std::string> answers_;
};

class FakeChecker : public CodeChecker {
 public:
  CodeCheck Check(const std::string& code, const std::string&) override {
    if (code.empty()) return {};
    if (code.find("@@") != std::string::npos) return {CodeCheck::Verdict::kFailed, "expected ';'"};
    return {CodeCheck::Verdict::kCompiled, ""};
  }
};

SourceChunk AxpyChunk() {
  auto chunks = ChunkTree(TreeRoot(), ChunkOptions{.max_lines = 80, .min_lines = 8});
  EXPECT_TRUE(chunks.ok());
  EXPECT_FALSE(chunks->empty());
  return chunks->front();
}

// Lines 9-14 of blas1/axpy.cpp hold axpy_reference; 17-19 axpy_grid_size.
constexpr const char* kGrounded = R"({"pairs": [
  {"question": "When does axpy_reference return early?",
   "answer": "When `n` is 0 or `alpha` equals `T(0)`, `axpy_reference` returns before the loop.",
   "lines": [9, 14]},
  {"question": "How many blocks does axpy_grid_size use?",
   "answer": "It rounds `n` up to whole blocks of `kAxpyBlock` threads: (n + kAxpyBlock - 1) / kAxpyBlock.",
   "lines": [17, 19], "code": "int blocks = (n + 255) / 256;"}]})";

constexpr const char* kUngrounded = R"(Here you go:
```json
{"pairs": [
  {"question": "What block size does axpy use?", "answer": "It uses blocks of 512 threads.", "lines": [17, 19]},
  {"question": "Which file is this?", "answer": "A level one routine.", "lines": [1, 3]},
  {"question": "What is at line 400?", "answer": "`axpy_reference`", "lines": [400, 410]},
  {"question": "Show the loop", "answer": "The loop over `i` scales `x` by `alpha`.", "lines": [13, 13], "code": "for (@@"},
  {"question": "missing lines", "answer": "`n`"}
]}
```)";

TEST(QaChunk, ChunksCoverTheFileInBoundedBlocks) {
  auto text = ReadFile(TreeRoot() + "/blas1/axpy.cpp");
  ASSERT_TRUE(text.ok());
  auto chunks = ChunkSource("blas1/axpy.cpp", *text, "cpp", ChunkOptions{.max_lines = 6, .min_lines = 2});
  ASSERT_GE(chunks.size(), 3u);
  int next = 1;
  for (const auto& c : chunks) {
    EXPECT_LE(c.last_line - c.first_line + 1, 6);
    EXPECT_GE(c.first_line, next);
    next = c.last_line + 1;
  }
  EXPECT_EQ(chunks.back().last_line, 21);
  EXPECT_EQ(AxpyChunk().Citation(), "blas1/axpy.cpp:1-21");
  EXPECT_FALSE(ChunkTree(TreeRoot() + "/missing", {}).ok());
}

TEST(QaMine, ParsesBareAndFencedAnswersRejectsGarbage) {
  int malformed = 0;
  auto bare = ParseQaAnswer(kGrounded, &malformed);
  ASSERT_TRUE(bare.ok()) << bare.error();
  EXPECT_EQ(bare->size(), 2u);
  EXPECT_EQ((*bare)[1].code, "int blocks = (n + 255) / 256;");
  auto fenced = ParseQaAnswer(kUngrounded, &malformed);
  ASSERT_TRUE(fenced.ok());
  EXPECT_EQ(fenced->size(), 4u);
  EXPECT_EQ(malformed, 1);
  EXPECT_FALSE(ParseQaAnswer("I cannot help with that.", &malformed).ok());
  EXPECT_FALSE(ParseQaAnswer(R"({"answers": []})", &malformed).ok());
}

TEST(QaMine, KeyTermsSkipProseAndLineCitations) {
  EXPECT_EQ(KeyTerms("See lines 12-14: `incx` scales the stride, as does kAxpyBlock 256."),
            (std::vector<std::string>{"256", "incx", "kAxpyBlock"}));
  EXPECT_TRUE(KeyTerms("It adds two vectors.").empty());
  // A model's answer past what std::regex can match grounds nothing (util/strings.h).
  EXPECT_TRUE(KeyTerms("See line" + std::string(200000, ' ') + "12: `incx`.").empty());
}

TEST(QaMine, GroundedPairsKeptUngroundedDropped) {
  SourceChunk chunk = AxpyChunk();
  FakeChecker checker;
  int malformed = 0;
  auto good = ParseQaAnswer(kGrounded, &malformed);
  for (const auto& p : *good) EXPECT_TRUE(CheckGrounding(p, chunk, checker).grounded) << p.question;
  auto bad = ParseQaAnswer(kUngrounded, &malformed);
  std::vector<std::string> reasons;
  for (const auto& p : *bad) reasons.push_back(CheckGrounding(p, chunk, checker).reason);
  EXPECT_EQ(reasons, (std::vector<std::string>{"term_not_in_cited_lines", "no_key_terms",
                                               "lines_outside_chunk", "code_does_not_compile"}));
}

TEST(QaMine, RunStoresGroundedPairsDedupsAndResumesAfterADeadServer) {
  auto dir = TempDir::Create("", "kvault-qa-test");
  ASSERT_TRUE(dir.ok());
  std::string root = dir->Join("tree");
  ASSERT_TRUE(EnsureDir(root + "/a").ok());
  auto text = ReadFile(TreeRoot() + "/blas1/axpy.cpp");
  ASSERT_TRUE(WriteFileAtomic(root + "/a/axpy.cpp", *text).ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/b.cpp", *text).ok());  // a second chunk, same lines
  auto chunks = ChunkTree(root, {});
  ASSERT_TRUE(chunks.ok());
  ASSERT_EQ(chunks->size(), 2u);

  FakeChecker checker;
  std::vector<KernelRecord> stored;
  auto sink = [&](const std::vector<KernelRecord>& rs) {
    stored.insert(stored.end(), rs.begin(), rs.end());
    return Status{};
  };
  std::set<std::string> known;
  auto progress = QaProgress::Open(dir->Join("progress.jsonl"));
  ASSERT_TRUE(progress.ok());

  // First run: garbage for chunk 1 (asked again later), then the server dies.
  ScriptedClient first({"not json at all", "!dead"});
  QaMiner miner1(first, checker, {.model = "m"});
  QaMineReport r1;
  Status s1 = miner1.Run(*chunks, *progress, known, sink, &r1);
  EXPECT_FALSE(s1.ok());
  EXPECT_NE(s1.error().find("b.cpp"), std::string::npos) << s1.error();
  EXPECT_EQ(r1.unparseable, 1);
  EXPECT_TRUE(stored.empty());

  // Second run, progress re-read from the file: both chunks asked; the second chunk's
  // grounded pairs repeat the first's questions and are dropped as duplicates.
  auto reopened = QaProgress::Open(dir->Join("progress.jsonl"));
  ScriptedClient second({kGrounded, std::string(kGrounded)});
  QaMiner miner2(second, checker, {.model = "m", .license = "MIT"});
  QaMineReport r2;
  ASSERT_TRUE(miner2.Run(*chunks, *reopened, known, sink, &r2).ok());
  EXPECT_EQ(r2.kept, 2);
  EXPECT_EQ(r2.duplicates, 2);
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].kind, kKindQa);
  EXPECT_EQ(stored[0].qa.citation, "a/axpy.cpp:9-14");
  EXPECT_EQ(stored[0].provenance.license, "MIT");
  EXPECT_FALSE(stored[0].id.empty());
  ASSERT_EQ(stored[1].results.size(), 1u);
  EXPECT_EQ(stored[1].results[0].status, "compiled");

  // Third run: everything done, nothing asked.
  auto again = QaProgress::Open(dir->Join("progress.jsonl"));
  ScriptedClient third({});
  QaMiner miner3(third, checker, {.model = "m"});
  QaMineReport r3;
  ASSERT_TRUE(miner3.Run(*chunks, *again, known, sink, &r3).ok());
  EXPECT_EQ(r3.skipped_done, 2);
  EXPECT_TRUE(third.requests.empty());
}

TEST(QaMine, GxxCheckerCompilesFailsOrLeavesUnchecked) {
  if (!FileExists("/usr/bin/g++")) GTEST_SKIP() << "no g++";
  auto checker = MakeGxxChecker();
  EXPECT_EQ(checker->Check("int twice(int v) { return 2 * v; }", "cpp").verdict, CodeCheck::Verdict::kCompiled);
  EXPECT_EQ(checker->Check("int n = 4; int b = (n + 255) / 256;", "cpp").verdict, CodeCheck::Verdict::kCompiled);
  EXPECT_EQ(checker->Check("for (int i = 0; i < ; ++i) {", "cpp").verdict, CodeCheck::Verdict::kFailed);
  EXPECT_EQ(checker->Check("rocblas_handle h; rocblas_create_handle(&h);", "cpp").verdict,
            CodeCheck::Verdict::kUnchecked);
  EXPECT_EQ(checker->Check("x = 1", "python").verdict, CodeCheck::Verdict::kUnchecked);
  EXPECT_EQ(checker->Check("", "cpp").verdict, CodeCheck::Verdict::kNone);
}

}  // namespace
}  // namespace kvault::corpus
