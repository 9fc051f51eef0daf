// The OptimAgent loop with a fake model, a fake evaluator and an in-memory call log.
#include "agent/loop.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <mutex>

#include "agent/pipeline.h"
#include "util/files.h"

namespace kvault::agent {
namespace {

// Answers generator calls from a queue (the last one repeats); reflector calls get
// "REFLECTION <n>". "FAIL" answers are failed calls. Keeps every request.
class FakeChat : public llm::ChatClient {
 public:
  explicit FakeChat(std::deque<std::string> answers) : answers_(std::move(answers)) {}
  Result<llm::ChatResponse> Complete(const llm::ChatRequest& req) override {
    std::lock_guard<std::mutex> lock(mu_);
    requests.push_back(req);
    const std::string& user = req.messages.back().content;
    llm::ChatResponse r;
    r.model_requested = req.model;
    r.model_returned = "fake-model-1";
    if (user.find("role: reflector") != std::string::npos) {
      r.content = "REFLECTION " + std::to_string(++reflections);
      return r;
    }
    std::string a = answers_.front();
    if (answers_.size() > 1) answers_.pop_front();
    if (a == "FAIL") return Error{"HTTP 500 after 3 attempts"};
    r.content = a;
    return r;
  }
  std::vector<llm::ChatRequest> requests;
  int reflections = 0;

 private:
  std::mutex mu_;
  std::deque<std::string> answers_;
};

// "CODE:<body>" -> body; anything else has no code.
Result<std::string> FakeExtract(std::string_view answer) {
  if (answer.substr(0, 5) != "CODE:") return Error{"no code block in the answer"};
  return std::string(answer.substr(5));
}

// Code "ok <speedup>" passes with that speedup, "ok" passes untimed, "infra" is an
// infra_error, else mismatch.
class FakeEvaluator : public Evaluator {
 public:
  Result<AttemptRecord> Evaluate(const TaskFile& task, const std::string& path) override {
    auto text = ReadFile(path);
    if (!text) return Error{text.error()};
    AttemptRecord a;
    a.id = ++next_id;
    a.task = task.name;
    a.candidate_path = path;
    a.compiled = true;
    if (text->rfind("ok", 0) == 0) {
      a.status = "passed";
      a.correct = true;
      if (text->size() > 3) a.speedup = std::stod(text->substr(3));
    } else if (*text == "infra") {
      a.status = "infra_error";
      a.message = "no worker could start";
    } else {
      a.status = "mismatch";
      a.message = "odd/seed 1: MISMATCH-DETAIL";
    }
    paths.push_back(path);
    return a;
  }
  int next_id = 0;
  std::vector<std::string> paths;
};

class MemoryLog : public CallLog {
 public:
  std::optional<GenerationRecord> Recorded(int it, int k, const std::string& role) override {
    auto i = rows.find({it, k, role});
    // As CallLog requires: a failed call is not an answer to replay.
    if (i == rows.end() || !replay || !i->second.error.empty()) return std::nullopt;
    return i->second;
  }
  Status Record(GenerationRecord& g) override {
    rows[{g.iteration, g.offspring, g.role}] = g;
    return Status::Ok();
  }
  bool replay = false;
  std::map<std::tuple<int, int, std::string>, GenerationRecord> rows;
};

PromptSet TestPrompts() {
  PromptSet p;
  p.version = "v1-test";
  p.system = "sys {{hardware}} {{format_contract}}";
  p.generate = "task: {{task_name}}\nrole: generator\niteration: {{iteration}}\n{{task_source}}";
  p.optimize = "task: {{task_name}}\nrole: generator\niteration: {{iteration}}\nparent: {{parent}}\n"
               "ANCESTORS\n{{ancestors}}HISTORY\n{{history}}";
  p.reflect = "task: {{task_name}}\nrole: reflector\n{{candidate}}{{verdict}}\n{{feedback}}";
  p.format = {"extension-cpp", ".cpp", "cpp", "contract"};
  p.hardware = "cpu";
  return p;
}

struct Harness {
  explicit Harness(std::deque<std::string> answers) : chat(std::move(answers)) {
    auto d = TempDir::Create("", "kvault-loop-test");
    dir = std::make_unique<TempDir>(std::move(*d));
    task.name = "relu";
    task.source = "class Model: ...";
    auto made = MakePipeline("torch2kernel", "");
    pipeline = std::move(made.value());
  }
  LoopResult Run(LoopSettings s, const std::atomic<bool>* stop = nullptr) {
    LoopSeams seams{&chat, FakeExtract, &evaluator, &log, dir->path()};
    return RunLoop(task, prompts, *pipeline, s, seams, stop);
  }
  std::string GeneratorPrompt(int iteration) const {
    auto it = log.rows.find({iteration, 0, "generator"});
    return it == log.rows.end() ? "" : it->second.prompt.back()["content"].get<std::string>();
  }
  FakeChat chat;
  FakeEvaluator evaluator;
  MemoryLog log;
  std::unique_ptr<TempDir> dir;
  TaskFile task;
  PromptSet prompts = TestPrompts();
  std::unique_ptr<Pipeline> pipeline;
};

TEST(Loop, CorrectFirstTimeStopsWhenNoPerfIterationsAreAllowed) {
  Harness h({"CODE:ok 1.5"});
  LoopSettings s;
  s.max_perf_debug = 0;
  LoopResult r = h.Run(s);
  ASSERT_EQ(r.offsprings.size(), 1u);
  ASSERT_TRUE(r.best);
  EXPECT_EQ(r.offsprings[*r.best].label, "iter1_0");
  EXPECT_EQ(r.calls, 2);  // generator + reflector
  const GenerationRecord& g = h.log.rows.at({1, 0, "generator"});
  EXPECT_EQ(g.outcome, "passed");
  EXPECT_EQ(g.attempt_id, std::optional<int64_t>(1));
  EXPECT_EQ(g.model_returned, "fake-model-1");
  EXPECT_EQ(g.prompt_version, "v1-test");
  EXPECT_EQ(g.prompt[0]["role"], "system");
  EXPECT_EQ(h.log.rows.at({1, 0, "reflector"}).outcome, "reflection");
  EXPECT_EQ(h.evaluator.paths, std::vector<std::string>{h.dir->path() + "/iter1_0.cpp"});
}

TEST(Loop, BrokenThenFixedFeedsFeedbackAndReflectionForward) {
  Harness h({"CODE:broken", "CODE:ok"});
  LoopSettings s;
  s.max_perf_debug = 0;
  LoopResult r = h.Run(s);
  ASSERT_EQ(r.offsprings.size(), 2u);
  EXPECT_FALSE(r.offsprings[0].correct());
  ASSERT_TRUE(r.best);
  EXPECT_EQ(*r.best, 1u);
  const std::string p2 = h.GeneratorPrompt(2);
  EXPECT_NE(p2.find("MISMATCH-DETAIL"), std::string::npos) << p2;
  EXPECT_NE(p2.find("REFLECTION 1"), std::string::npos) << p2;
  EXPECT_NE(p2.find("iteration: 2"), std::string::npos);
  EXPECT_EQ(h.log.rows.at({2, 0, "generator"}).parent, "iter1_0");
}

TEST(Loop, KeepsTheBestAncestorsSortedBySpeedup) {
  Harness h({"CODE:ok 2.0", "CODE:ok 1.2", "CODE:ok 3.0", "CODE:ok 0.5"});
  LoopSettings s;
  s.iterations = 4;
  s.ancestors = 2;
  LoopResult r = h.Run(s);
  ASSERT_EQ(r.offsprings.size(), 4u);
  ASSERT_TRUE(r.best);
  EXPECT_EQ(r.offsprings[*r.best].label, "iter3_0");  // the fastest, not the last
  // Iteration 3 sees 2.0 then 1.2; iteration 4 sees 3.0 then 2.0 (1.2 dropped, 2.0 kept).
  const std::string p3 = h.GeneratorPrompt(3), p4 = h.GeneratorPrompt(4);
  const std::string a3 = p3.substr(p3.find("ANCESTORS"), p3.find("HISTORY") - p3.find("ANCESTORS"));
  const std::string a4 = p4.substr(p4.find("ANCESTORS"), p4.find("HISTORY") - p4.find("ANCESTORS"));
  EXPECT_LT(a3.find("iter1_0"), a3.find("iter2_0")) << a3;
  EXPECT_LT(a4.find("iter3_0"), a4.find("iter1_0")) << a4;
  EXPECT_EQ(a4.find("iter2_0"), std::string::npos) << a4;
  EXPECT_EQ(h.log.rows.at({4, 0, "generator"}).parent, "iter3_0");
}

TEST(Loop, BestCorrectOrdersUntimedLastAndKeepsTies) {
  std::vector<Offspring> all(4);
  auto set = [&](int i, bool ok, std::optional<double> s) {
    all[i].attempt = AttemptRecord{};
    all[i].attempt->correct = ok;
    all[i].attempt->speedup = s;
  };
  set(0, true, std::nullopt);
  set(1, true, 1.0);
  set(2, false, 9.0);
  set(3, true, 1.0);
  EXPECT_EQ(BestCorrect(all, 10), (std::vector<size_t>{1, 3, 0}));
  EXPECT_EQ(BestCorrect(all, 1), (std::vector<size_t>{1}));
}

TEST(Loop, NoCodeIsAnOutcomeAndAFailedCallStopsTheLoop) {
  Harness h({"I cannot help with that", "FAIL", "CODE:ok"});
  LoopSettings s;
  LoopResult r = h.Run(s);
  ASSERT_EQ(r.offsprings.size(), 1u);
  EXPECT_EQ(h.log.rows.at({1, 0, "generator"}).outcome, "no_code");
  EXPECT_TRUE(h.log.rows.count({1, 0, "reflector"}));  // a no-code answer is reflected on
  const GenerationRecord& failed = h.log.rows.at({2, 0, "generator"});
  EXPECT_EQ(failed.outcome, "call_failed");
  EXPECT_NE(failed.error.find("HTTP 500"), std::string::npos);
  EXPECT_NE(r.call_error.find("HTTP 500"), std::string::npos);
  EXPECT_FALSE(h.log.rows.count({2, 0, "reflector"}));  // nothing to reflect on
  EXPECT_FALSE(h.log.rows.count({3, 0, "generator"}));  // stopped: the service failed
  EXPECT_FALSE(r.best);
  EXPECT_TRUE(h.evaluator.paths.empty());
}

TEST(Loop, ResumeCallsAgainWhereACallFailed) {
  Harness first({"CODE:broken", "FAIL"});
  LoopSettings s;
  s.max_perf_debug = 0;
  LoopResult failed = first.Run(s);
  ASSERT_FALSE(failed.call_error.empty());

  Harness again({"CODE:ok"});
  again.log.rows = first.log.rows;
  again.log.replay = true;
  LoopResult r = again.Run(s);
  EXPECT_TRUE(r.call_error.empty());
  ASSERT_TRUE(r.best);
  EXPECT_EQ(r.offsprings[*r.best].label, "iter2_0");
  EXPECT_EQ(again.log.rows.at({2, 0, "generator"}).outcome, "passed");
}

// An infra_error verification is not the candidate's: the loop stops, unfinished,
// and nothing of it reaches the model.
TEST(Loop, InfraErrorVerificationStopsTheLoop) {
  Harness h({"CODE:infra", "CODE:ok"});
  LoopResult r = h.Run(LoopSettings{});
  EXPECT_TRUE(r.call_infra);
  EXPECT_NE(r.call_error.find("no worker could start"), std::string::npos) << r.call_error;
  EXPECT_TRUE(r.offsprings.empty());
  EXPECT_FALSE(h.log.rows.count({1, 0, "reflector"}));
  EXPECT_FALSE(h.log.rows.count({2, 0, "generator"}));
}

TEST(Loop, ResumeTakesRecordedCallsInsteadOfCallingAgain) {
  Harness first({"CODE:broken", "CODE:ok"});
  LoopSettings s;
  s.max_perf_debug = 0;
  std::atomic<bool> stop{false};
  first.Run(s);
  ASSERT_EQ(first.chat.requests.size(), 4u);

  Harness again({"CODE:never asked"});
  again.log.rows = first.log.rows;
  again.log.replay = true;
  LoopResult r = again.Run(s, &stop);
  EXPECT_EQ(again.chat.requests.size(), 0u);
  EXPECT_EQ(r.calls, 0);
  ASSERT_TRUE(r.best);
  EXPECT_EQ(r.offsprings[*r.best].label, "iter2_0");
}

TEST(Loop, StopFlagEndsTheLoop) {
  Harness h({"CODE:broken"});
  std::atomic<bool> stop{true};
  LoopResult r = h.Run(LoopSettings{}, &stop);
  EXPECT_TRUE(r.stopped);
  EXPECT_TRUE(r.offsprings.empty());
  EXPECT_TRUE(h.chat.requests.empty());
}

TEST(Loop, OffspringsPerIteration) {
  Harness h({"CODE:broken"});
  LoopSettings s;
  s.offsprings = 3;
  s.iterations = 2;
  LoopResult r = h.Run(s);
  EXPECT_EQ(r.offsprings.size(), 6u);
  EXPECT_TRUE(h.log.rows.count({2, 2, "generator"}));
  EXPECT_FALSE(r.best);
}

TEST(Pipeline, KernelToKernelSplicesAndModuToFuncAppendsModelNew) {
  auto k2k = MakePipeline("kernel2kernel", "__global__ void k(float* p) { p[0] = 1; }\nint f();\n");
  ASSERT_TRUE(k2k);
  auto spliced = (*k2k)->CandidateSource("__global__ void k2(float* p) { p[0] = 2; }");
  ASSERT_TRUE(spliced) << spliced.error();
  EXPECT_EQ(*spliced, "__global__ void k(float* p) { p[0] = 2; }\nint f();\n");
  EXPECT_FALSE(MakePipeline("kernel2kernel", ""));
  EXPECT_FALSE(MakePipeline("nope", ""));
  auto m2f = MakePipeline("modu2func", "");
  ASSERT_TRUE(m2f);
  EXPECT_FALSE((*m2f)->CandidateSource("class Model: pass\n"));
  auto twin = (*m2f)->CandidateSource("def module_fn(x):\n  return x\nclass Model: pass\n");
  ASSERT_TRUE(twin);
  EXPECT_NE(twin->find("class ModelNew(Model)"), std::string::npos);
}

}  // namespace
}  // namespace kvault::agent
