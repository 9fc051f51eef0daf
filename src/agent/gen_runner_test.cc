// The suite runner with a fake model and evaluator over a real generation log.
#include "agent/gen_runner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>

#include "util/files.h"

namespace kvault::agent {
namespace {

// Generator: "CODE:ok" for task "a", "CODE:bad" for others; reflector: prose.
class ScriptedChat : public llm::ChatClient {
 public:
  Result<llm::ChatResponse> Complete(const llm::ChatRequest& req) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++calls;
    if (down) return Error{"connection refused"};
    const std::string& user = req.messages.back().content;
    llm::ChatResponse r;
    r.model_returned = req.model;
    if (user.find("role: reflector") != std::string::npos) r.content = "think harder";
    else r.content = user.find("task: a\n") != std::string::npos ? "CODE:ok" : "CODE:bad";
    return r;
  }
  int calls = 0;
  bool down = false;  // every call fails, as with a dead endpoint

 private:
  std::mutex mu_;
};

class FileEvaluator : public Evaluator {
 public:
  Result<AttemptRecord> Evaluate(const TaskFile& task, const std::string& path) override {
    auto text = ReadFile(path);
    if (!text) return Error{text.error()};
    AttemptRecord a;
    a.id = ++ids;
    a.candidate_path = path;
    a.compiled = true;
    a.correct = *text == "ok";
    a.status = a.correct ? "passed" : "mismatch";
    if (a.correct) a.speedup = 1.25;
    return a;
  }
  std::atomic<int> ids{0};
};

Result<std::string> Extract(std::string_view answer) {
  if (answer.substr(0, 5) != "CODE:") return Error{"no code"};
  return std::string(answer.substr(5));
}

PromptSet Prompts() {
  PromptSet p;
  p.version = "v1-test";
  p.system = "sys";
  p.generate = p.optimize = "task: {{task_name}}\nrole: generator\niteration: {{iteration}}\n{{history}}";
  p.reflect = "task: {{task_name}}\nrole: reflector\n{{feedback}}";
  p.format = {"extension-cpp", ".cpp", "cpp", ""};
  return p;
}

TEST(RunGeneration, SummarisesRecordsAndResumeSkipsFinishedTasks) {
  auto dir = TempDir::Create("", "kvault-gen-test");
  ASSERT_TRUE(dir);
  auto log = GenerationLog::Open(dir->Join("kv.db"));
  ASSERT_TRUE(log) << log.error();
  std::vector<TaskFile> tasks(2);
  tasks[0].name = "a";
  tasks[1].name = "b";
  GenSettings s;
  s.run = "r";
  s.gen_dir = dir->Join("gen");
  s.loop.iterations = 2;
  ScriptedChat chat;
  FileEvaluator eval;
  GenSeams seams{&chat, Extract, &eval, log->get()};
  PromptSet prompts = Prompts();
  std::atomic<bool> stop{false};
  int progress_calls = 0, iteration_calls = 0;
  auto out = RunGeneration(tasks, prompts, s, seams, &stop, [&](const GenProgress& p) {
    if (p.offspring) {
      ++iteration_calls;
      EXPECT_EQ(p.iterations, 2);
      EXPECT_EQ(p.offspring->attempt.has_value(), true) << p.task;
    } else {
      ++progress_calls;
    }
  });
  ASSERT_TRUE(out) << out.error();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ(progress_calls, 2);   // one per task
  EXPECT_EQ(iteration_calls, 4);  // one per candidate: 2 tasks x 2 iterations
  const GenTaskSummary& a = (*out)[0];
  const GenTaskSummary& b = (*out)[1];
  EXPECT_TRUE(a.solved);
  EXPECT_TRUE(a.finished);
  EXPECT_EQ(a.attempts, 2);
  EXPECT_EQ(a.correct, 2);
  EXPECT_EQ(a.best_speedup, std::optional<double>(1.25));
  EXPECT_NE(a.best_path.find("gen/a/iter1_0.cpp"), std::string::npos) << a.best_path;
  EXPECT_FALSE(b.solved);
  EXPECT_EQ(b.outcomes.at("mismatch"), 2);
  EXPECT_EQ(chat.calls, 8);  // 2 tasks x 2 iterations x (generator + reflector)
  auto state = (*log)->FindTask("r", "b");
  ASSERT_TRUE(state && state->has_value());
  EXPECT_TRUE((*state)->finished);
  EXPECT_EQ((*state)->settings["prompt_version"], "v1-test");

  s.resume = true;
  auto again = RunGeneration(tasks, prompts, s, seams, &stop, nullptr);
  ASSERT_TRUE(again) << again.error();
  EXPECT_EQ(chat.calls, 8);
  EXPECT_TRUE((*again)[0].resumed);
  EXPECT_EQ((*again)[0].attempts, 2);
  EXPECT_TRUE((*again)[0].solved);
}

// One task "a" over a fresh generation log, the scripted model and the file evaluator.
struct OneTaskRun {
  OneTaskRun() {
    tasks[0].name = "a";
    s.gen_dir = dir.Join("gen");
  }
  Result<std::vector<GenTaskSummary>> Run(const std::atomic<bool>* stop = nullptr) {
    GenSeams seams{&chat, Extract, &eval, log.get()};
    return RunGeneration(tasks, prompts, s, seams, stop, nullptr);
  }
  static TempDir MakeDir() {
    auto d = TempDir::Create("", "kvault-gen-test");
    return std::move(*d);
  }
  static std::unique_ptr<GenerationLog> OpenLog(const std::string& path) {
    auto l = GenerationLog::Open(path);
    return l ? std::move(*l) : nullptr;
  }
  TempDir dir = MakeDir();
  std::unique_ptr<GenerationLog> log = OpenLog(dir.Join("kv.db"));
  std::vector<TaskFile> tasks = std::vector<TaskFile>(1);
  GenSettings s;
  ScriptedChat chat;
  FileEvaluator eval;
  PromptSet prompts = Prompts();
};

TEST(RunGeneration, StoppedRunLeavesTasksUnfinished) {
  OneTaskRun t;
  std::atomic<bool> stop{true};
  auto out = t.Run(&stop);
  ASSERT_TRUE(out);
  EXPECT_EQ((*out)[0].error, "interrupted");
  EXPECT_FALSE((*out)[0].finished);
  EXPECT_EQ(t.chat.calls, 0);
}

TEST(RunGeneration, FailedCallsLeaveTheTaskUnfinishedAndResumeCallsAgain) {
  OneTaskRun t;
  t.s.loop.iterations = 1;
  t.chat.down = true;
  auto out = t.Run();
  ASSERT_TRUE(out) << out.error();
  EXPECT_FALSE((*out)[0].finished);
  EXPECT_NE((*out)[0].call_error.find("connection refused"), std::string::npos);
  EXPECT_EQ((*out)[0].attempts, 0);  // a failed call is no attempt
  EXPECT_EQ(t.chat.calls, 1);

  t.chat.down = false;
  t.s.resume = true;
  auto again = t.Run();
  ASSERT_TRUE(again) << again.error();
  EXPECT_TRUE((*again)[0].finished);
  EXPECT_TRUE((*again)[0].solved);
  EXPECT_TRUE((*again)[0].call_error.empty());
  EXPECT_EQ(t.chat.calls, 3);  // the failed generator call again, then its reflector
}

TEST(RunGeneration, KernelToKernelWithoutBaselineIsATaskError) {
  OneTaskRun t;
  t.s.mode = "kernel2kernel";
  auto out = t.Run();
  ASSERT_TRUE(out);
  EXPECT_NE((*out)[0].error.find("no baseline"), std::string::npos);
  EXPECT_EQ(t.chat.calls, 0);
}

}  // namespace
}  // namespace kvault::agent
