#include "agent/gen_runner.h"

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

#include "engine/outcome.h"
#include "util/files.h"

namespace kvault::agent {
namespace {

// The CallLog of one task: records into the GenerationLog; with resume, finds the
// answered calls recorded by the interrupted run (a failed one is made again: the
// service failed, the loop stopped there, and a resumed run continues from it).
class TaskCallLog : public CallLog {
 public:
  TaskCallLog(GenerationLog& log, std::string run, std::string task, bool resume)
      : log_(log), run_(std::move(run)), task_(std::move(task)), resume_(resume) {}
  std::optional<GenerationRecord> Recorded(int iteration, int offspring,
                                           const std::string& role) override {
    if (!resume_) return std::nullopt;
    auto found = log_.Find(run_, task_, iteration, offspring, role);
    if (!found || !found->has_value() || !(*found)->error.empty()) return std::nullopt;
    return **found;
  }
  Status Record(GenerationRecord& record) override {
    record.run = run_;
    record.task = task_;
    return log_.Put(record);
  }

 private:
  GenerationLog& log_;
  std::string run_, task_;
  bool resume_;
};

bool Compiled(const std::string& status) {
  auto s = OutcomeStatusFromString(status);
  if (!s) return false;
  switch (*s) {
    case OutcomeStatus::kParseError:
    case OutcomeStatus::kUnsupported:
    case OutcomeStatus::kCompileError:
    case OutcomeStatus::kTaskError:
    case OutcomeStatus::kInfraError:
      return false;
    default:
      return true;
  }
}

// Counts from the task's generator rows (the same for a task done now or earlier).
void Summarise(const std::vector<GenerationRecord>& rows, GenTaskSummary& out) {
  for (const GenerationRecord& g : rows) {
    if (g.role != "generator") continue;
    ++out.outcomes[g.outcome];
    if (g.outcome == "call_failed") continue;  // nothing was answered
    ++out.attempts;
    if (!g.attempt_id) continue;
    ++out.verified;
    if (Compiled(g.outcome)) ++out.compiled;
    if (g.outcome == "passed") ++out.correct;
  }
}

Json Opt(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

}  // namespace

Json GenTaskSummary::ToJson() const {
  Json o{{"task", task},         {"solved", solved},     {"finished", finished},
         {"resumed", resumed},   {"attempts", attempts}, {"verified", verified},
         {"compiled", compiled}, {"correct", correct},   {"calls", calls},
         {"best_speedup", Opt(best_speedup)},
         {"best_candidate", best_path.empty() ? Json(nullptr) : Json(best_path)},
         {"outcomes", outcomes}};
  if (best_baseline_speedup) o["best_baseline_speedup"] = *best_baseline_speedup;
  if (!error.empty()) o["error"] = error;
  return o;
}

Result<std::vector<GenTaskSummary>> RunGeneration(
    const std::vector<TaskFile>& tasks, const PromptSet& prompts, const GenSettings& settings,
    const GenSeams& seams, const std::atomic<bool>* stop,
    const std::function<void(const GenProgress&)>& progress) {
  std::vector<GenTaskSummary> summaries(tasks.size());
  std::atomic<size_t> next{0};
  std::mutex mu;  // guards done, fatal, progress, idle
  size_t done = 0;
  std::string fatal;
  auto set_fatal = [&](const std::string& why) {
    std::lock_guard<std::mutex> lock(mu);
    if (fatal.empty()) fatal = why;
  };

  auto run_task = [&](const TaskFile& task, GenTaskSummary& sum) {
    sum.task = task.name;
    GenerationLog& log = *seams.log;
    auto state = log.FindTask(settings.run, task.name);
    if (!state) return set_fatal(state.error());
    GenTaskRecord rec = state->value_or(GenTaskRecord{});
    rec.run = settings.run;
    rec.task = task.name;
    if (rec.finished) {
      sum.finished = sum.resumed = true;
    } else {
      std::string baseline;
      std::optional<double> baseline_ms;
      if (settings.mode == "kernel2kernel") {
        auto it = settings.baselines.find(task.name);
        if (it == settings.baselines.end()) {
          sum.error = "no baseline kernel for this task";
          return;
        }
        baseline = it->second;
      }
      auto pipeline = MakePipeline(settings.mode, baseline);
      if (!pipeline) {
        sum.error = pipeline.error();
        return;
      }
      const std::string dir = settings.gen_dir + "/" + task.name;
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      if (ec) return set_fatal("cannot create " + dir + ": " + ec.message());
      if (settings.mode == "kernel2kernel") {  // the baseline's own time, for its speedup
        const std::string path = dir + "/baseline" + prompts.format.file_extension;
        if (Status st = WriteFileAtomic(path, baseline); !st)
          return set_fatal("cannot write " + path + ": " + st.error());
        auto b = seams.evaluator->Evaluate(task, path);
        if (!b) return set_fatal(b.error());
        if (b->correct) baseline_ms = b->candidate_ms;
      }
      rec.settings = settings.recorded_settings;
      rec.settings["prompt_version"] = prompts.version;
      if (Status st = log.PutTask(rec); !st) return set_fatal(st.error());
      TaskCallLog calls(log, settings.run, task.name, settings.resume);
      LoopSeams seams_for_task{seams.client, seams.extract, seams.evaluator, &calls, dir, {}};
      if (progress)
        seams_for_task.on_offspring = [&](const Offspring& o) {
          std::lock_guard<std::mutex> lock(mu);
          GenProgress p{done, tasks.size(), nullptr, &o, task.name, settings.loop.iterations};
          progress(p);
        };
      LoopResult r = RunLoop(task, prompts, **pipeline, settings.loop, seams_for_task, stop);
      if (!r.infra_error.empty()) return set_fatal(task.name + ": " + r.infra_error);
      sum.calls = r.calls;
      rec.candidates = 0;
      for (const Offspring& o : r.offsprings) rec.candidates += o.attempt ? 1 : 0;
      rec.finished = !r.stopped && r.call_error.empty();
      if (r.stopped) sum.error = "interrupted";
      if (!r.call_error.empty()) sum.error = sum.call_error = r.call_error;
      sum.call_infra = r.call_infra;
      rec.solved = r.best.has_value();
      if (r.best) {
        const AttemptRecord& best = *r.offsprings[*r.best].attempt;
        rec.best_attempt_id = best.id;
        rec.best_path = best.candidate_path;
        rec.best_speedup = best.speedup;
        if (baseline_ms && best.candidate_ms && *best.candidate_ms > 0)
          sum.best_baseline_speedup = *baseline_ms / *best.candidate_ms;
      }
      if (Status st = log.PutTask(rec); !st) return set_fatal(st.error());
      sum.finished = rec.finished;
    }
    sum.solved = rec.solved;
    sum.best_speedup = rec.best_speedup;
    sum.best_path = rec.best_path;
    auto rows = log.ListTask(settings.run, task.name);
    if (!rows) return set_fatal(rows.error());
    Summarise(*rows, sum);
  };

  // A verification lane's workers are started by whichever task thread used the lane
  // first; they outlive that thread (util/child_process.h: children are started from
  // one long-lived thread), so a thread simply ends when the tasks run out.
  auto worker = [&]() {
    for (size_t i = next++; i < tasks.size(); i = next++) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!fatal.empty()) return;
      }
      if (stop && stop->load()) {
        summaries[i].task = tasks[i].name;
        summaries[i].error = "interrupted";
      } else {
        run_task(tasks[i], summaries[i]);
      }
      std::lock_guard<std::mutex> lock(mu);
      ++done;
      if (progress) progress(GenProgress{done, tasks.size(), &summaries[i], nullptr, tasks[i].name, 0});
    }
  };
  const int threads =
      std::max(1, std::min<int>(settings.jobs + settings.concurrency, static_cast<int>(tasks.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (!fatal.empty()) return Error{fatal};
  return summaries;
}

}  // namespace kvault::agent
