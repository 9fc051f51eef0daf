#include "engine/worker_outcome.h"

#include <gtest/gtest.h>

#include "util/json_parse.h"

namespace kvault {
namespace {

WorkerReply ReplyOf(const char* line) {
  auto parsed = ParseJson(line);
  if (!parsed) throw std::runtime_error(parsed.error());
  WorkerReply r;
  r.response = std::move(*parsed);
  return r;
}

TEST(WorkerOutcome, WellFormedFailureMapsKindMessageAndTraceback) {
  WorkerReply r = ReplyOf(R"({"id":1,"ok":false,"kind":"oom","message":"out of memory","traceback":"tb"})");
  ASSERT_FALSE(ReplyOk(r));
  Verification v = CandidateFailure(r, "run", std::chrono::seconds(30), "log");
  EXPECT_EQ(v.status, OutcomeStatus::kOom);
  EXPECT_EQ(v.message, "run: out of memory");
  EXPECT_EQ(v.diagnostics, "tb\n--- worker output ---\nlog");
}

// Found by fuzz/fuzz_json_worker_reply (fuzz/corpus/fuzz_json_worker_reply/regress_*):
// a field of the wrong type made nlohmann's value() throw out of the engine.
TEST(WorkerOutcome, FieldsOfTheWrongTypeCountAsAbsent) {
  WorkerReply r = ReplyOf(R"({"id":7,"ok":false,"kind":"load_error","message":"ModelNew missing","traceback":null})");
  Verification v = CandidateFailure(r, "load", std::chrono::seconds(1), "");
  EXPECT_EQ(v.status, OutcomeStatus::kLoadError);
  EXPECT_EQ(v.diagnostics, "");

  r = ReplyOf(R"({"id":1,"ok":false,"kind":5,"message":["x"],"traceback":{}})");
  v = CandidateFailure(r, "run", std::chrono::seconds(1), "");
  EXPECT_EQ(v.status, OutcomeStatus::kCrash);  // no kind: "internal", which fails closed
  EXPECT_NE(v.message.find("answered 'internal' (no message)"), std::string::npos) << v.message;
  TrustedFailure f = JudgeTrustedFailure(r, "describe");
  EXPECT_EQ(f.status, OutcomeStatus::kInfraError);  // no kind: the worker broke the protocol
  EXPECT_NE(f.message.find("a failure of no kind, which it never sends: (no message)"), std::string::npos)
      << f.message;
}

TEST(WorkerOutcome, TritonCompileErrorIsNotCompiled) {
  WorkerReply r = ReplyOf(R"({"id":3,"ok":false,"kind":"compile_error","message":"CompilationError: x"})");
  Verification v = CandidateFailure(r, "run case default seed 1", std::chrono::seconds(1), "");
  EXPECT_EQ(v.status, OutcomeStatus::kCompileError);
  EXPECT_FALSE(v.compiled);
  r = ReplyOf(R"({"id":3,"ok":false,"kind":"runtime_error","message":"TypeError: x"})");
  EXPECT_TRUE(CandidateFailure(r, "run", std::chrono::seconds(1), "").compiled);
}

TEST(WorkerOutcome, OnlyBooleanTrueIsOk) {
  EXPECT_TRUE(ReplyOk(ReplyOf(R"({"id":1,"ok":true})")));
  EXPECT_FALSE(ReplyOk(ReplyOf(R"({"id":1,"ok":"yes"})")));
  EXPECT_FALSE(ReplyOk(ReplyOf(R"({"id":1,"ok":1})")));
  EXPECT_FALSE(ReplyOk(ReplyOf(R"({"id":1})")));
  EXPECT_FALSE(ReplyOk(ReplyOf(R"([1])")));
  WorkerReply r = ReplyOf(R"({"id":1,"ok":"yes","kind":"runtime_error","message":"m"})");
  EXPECT_EQ(CandidateFailure(r, "run", std::chrono::seconds(1), "").status, OutcomeStatus::kRuntimeError);
}

}  // namespace
}  // namespace kvault

namespace kvault {
namespace {

// A candidate can write to its worker's response pipe: an answer that blames the
// engine ("internal", "bad_request") or the task ("task_error") must not let it escape.
TEST(WorkerOutcome, CandidateWorkerAnswersThatBlameOthersCountAgainstTheCandidate) {
  for (const char* kind : {"internal", "bad_request", "task_error", "made_up"}) {
    WorkerReply r;
    r.response = Json{{"id", 3}, {"ok", false}, {"kind", kind}, {"message", "not my fault"}};
    Verification v = CandidateFailure(r, "run case default seed 1", std::chrono::seconds(1), "");
    EXPECT_EQ(v.status, OutcomeStatus::kCrash) << kind;
    EXPECT_NE(v.message.find(std::string("answered '") + kind + "' (not my fault)"), std::string::npos)
        << v.message;
  }
}

}  // namespace
}  // namespace kvault

namespace kvault {
namespace {

WorkerReply Transport(WorkerFailure failure, const std::string& detail) {
  WorkerReply r;
  r.failure = failure;
  r.detail = detail;
  return r;
}

// The one rule for failed reference calls (docs/outcomes.md, "Failures of the
// reference worker"): the task's code failing is the task's; the engine's request,
// the worker's machinery or its protocol failing is the engine's.
TEST(WorkerOutcome, ReferenceFailuresAreTheTasksOnlyWhereItsCodeFailed) {
  struct Case {
    WorkerReply reply;
    OutcomeStatus status;
    const char* says;
  };
  auto answered = [](const char* kind, const char* message) {
    WorkerReply r;
    r.response = Json{{"id", 2}, {"ok", false}, {"kind", kind}, {"message", message}};
    return r;
  };
  const Case cases[] = {
      {answered("task_error", "get_inputs raised: ValueError"), OutcomeStatus::kTaskError,
       "the reference: get_inputs raised: ValueError"},
      {answered("oom", "OutOfMemoryError: CUDA out of memory"), OutcomeStatus::kTaskError,
       "the reference: OutOfMemoryError: CUDA out of memory"},  // JudgeOutOfMemory reads these words
      {Transport(WorkerFailure::kTimeout, "no answer within 30 s"), OutcomeStatus::kTaskError,
       "the reference ran past its limit"},
      {Transport(WorkerFailure::kDied, "worker killed by signal 11 (SIGSEGV)"), OutcomeStatus::kTaskError,
       "the reference: worker killed by signal 11 (SIGSEGV)"},
      {answered("bad_request", "'case' must be an integer"), OutcomeStatus::kInfraError,
       "malformed (bad_request, an engine bug): 'case' must be an integer"},
      {answered("internal", "cannot write /x: No space left on device"), OutcomeStatus::kInfraError,
       "failed (internal): cannot write /x: No space left on device"},
      {answered("runtime_error", "x"), OutcomeStatus::kInfraError, "answered kind 'runtime_error', which it never"},
      {answered("made_up", "x"), OutcomeStatus::kInfraError, "answered kind 'made_up'"},
      {Transport(WorkerFailure::kProtocol, "invalid JSON from worker"), OutcomeStatus::kInfraError,
       "broke the protocol: invalid JSON from worker"},
  };
  for (const Case& c : cases) {
    TrustedFailure f = JudgeTrustedFailure(c.reply, "the reference");
    EXPECT_EQ(f.status, c.status) << c.says;
    EXPECT_NE(f.message.find(c.says), std::string::npos) << f.message;
  }
  TrustedFailure start = TrustedStartFailure("task relu", "cannot start worker (python3): No such file");
  EXPECT_EQ(start.status, OutcomeStatus::kInfraError);
  EXPECT_EQ(start.message, "task relu: the reference worker could not start: cannot start worker (python3): No such file");
  EXPECT_EQ(TrustedReplyUnusable("the reference", "no time").status, OutcomeStatus::kInfraError);
}

}  // namespace
}  // namespace kvault
