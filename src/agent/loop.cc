#include "agent/loop.h"

#include <algorithm>
#include <cstdio>

#include "agent/template.h"
#include "util/files.h"

namespace kvault::agent {
namespace {

std::string SpeedupText(const std::optional<double>& s) {
  if (!s) return "not timed";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3fx", *s);
  return buf;
}

std::string Fenced(const std::string& fence, const std::string& code) {
  std::string body = code;
  if (!body.empty() && body.back() != '\n') body += '\n';
  return "```" + fence + "\n" + body + "```\n";
}

std::string Verdict(const Offspring& o) {
  if (!o.attempt) return o.code.empty() ? "no usable code" : "not verified";
  if (o.attempt->correct) return "correct (speedup " + SpeedupText(o.attempt->speedup) + ")";
  return "failed (" + o.attempt->status + ")";
}

class Loop {
 public:
  Loop(const TaskFile& task, const PromptSet& prompts, const Pipeline& pipeline,
       const LoopSettings& settings, const LoopSeams& seams, const std::atomic<bool>* stop)
      : task_(task), prompts_(prompts), pipeline_(pipeline), s_(settings), seams_(seams), stop_(stop) {}

  LoopResult Run() {
    int perf_iterations = 0;
    for (int it = 1; it <= std::max(1, s_.iterations); ++it) {
      const bool solved = !BestCorrect(result_.offsprings, 1).empty();
      if (solved && s_.max_perf_debug >= 0 && perf_iterations >= s_.max_perf_debug) break;
      if (solved) ++perf_iterations;
      const std::vector<Offspring> previous = Previous(it);
      for (int k = 0; k < std::max(1, s_.offsprings); ++k) {
        if (Stopped() || Failed()) return Finish();
        Offspring o = Generate(it, k, previous);
        if (Failed()) return Finish();  // an infra_error candidate is not shown to the model
        if (Stopped()) {
          result_.offsprings.push_back(std::move(o));
          return Finish();
        }
        Reflect(o);
        result_.offsprings.push_back(std::move(o));
        if (seams_.on_offspring) seams_.on_offspring(result_.offsprings.back());
        if (Failed()) return Finish();
      }
    }
    return Finish();
  }

 private:
  bool Stopped() {
    if (stop_ && stop_->load()) result_.stopped = true;
    return result_.stopped;
  }

  bool Failed() const { return !result_.infra_error.empty() || !result_.call_error.empty(); }

  LoopResult Finish() {
    auto best = BestCorrect(result_.offsprings, 1);
    if (!best.empty()) result_.best = best.front();
    return std::move(result_);
  }

  std::vector<Offspring> Previous(int it) const {
    std::vector<Offspring> out;
    for (const Offspring& o : result_.offsprings)
      if (o.iteration == it - 1) out.push_back(o);
    return out;
  }

  std::string Code(const std::string& code) const {
    return Fenced(prompts_.format.fence, Truncate(code, s_.max_code_in_prompt));
  }

  std::string Ancestors() const {
    std::string out;
    for (size_t i : BestCorrect(result_.offsprings, static_cast<size_t>(std::max(0, s_.ancestors)))) {
      const Offspring& o = result_.offsprings[i];
      out += "### Candidate " + o.label + " (correct, speedup " + SpeedupText(o.attempt->speedup) +
             ")\n" + Code(o.code) + "\n";
    }
    return out.empty() ? "(no correct candidate yet)\n" : out;
  }

  std::string History(const std::vector<Offspring>& previous) const {
    std::string out;
    for (const Offspring& o : previous) {
      out += "### Candidate " + o.label + ": " + Verdict(o) + "\n";
      out += o.code.empty() ? "(the answer held no usable code)\n" : Code(o.code);
      out += "\nFeedback:\n" + o.feedback + "\n";
      if (!o.reflection.empty()) out += "Reflection:\n" + o.reflection + "\n";
      out += "\n";
    }
    return out.empty() ? "(none)\n" : out;
  }

  TemplateValues Values(int it, const std::string& parent) const {
    return GeneratorValues(prompts_, task_.name, task_.source, pipeline_.baseline(), it, parent);
  }

  // Renders system + user; an Error here is a defect of the prompt files.
  Result<std::vector<llm::ChatMessage>> Messages(const std::string& user_template,
                                                 const TemplateValues& values) {
    auto system = RenderTemplate(prompts_.system, values);
    if (!system) return Error{"system prompt: " + system.error()};
    auto user = RenderTemplate(user_template, values);
    if (!user) return Error{"user prompt: " + user.error()};
    return std::vector<llm::ChatMessage>{{"system", *system}, {"user", *user}};
  }

  // One call, or its recorded twin. Records it (outcome "pending" for a generator).
  GenerationRecord Call(int it, int k, const std::string& role, const std::string& parent,
                        const std::vector<llm::ChatMessage>& messages) {
    if (auto recorded = seams_.log->Recorded(it, k, role)) return *recorded;
    GenerationRecord g;
    g.task = task_.name;
    g.iteration = it;
    g.offspring = k;
    g.role = role;
    g.parent = parent;
    g.model_requested = s_.model;
    g.prompt_version = prompts_.version;
    for (const auto& m : messages) g.prompt.push_back({{"role", m.role}, {"content", m.content}});
    llm::ChatRequest req{.model = s_.model, .messages = messages, .temperature = s_.temperature,
                         .max_tokens = s_.max_tokens, .seed = std::nullopt};
    auto resp = seams_.client->Complete(req);
    ++result_.calls;
    if (resp) {
      g.response = resp->content;
      g.model_returned = resp->model_returned;
      g.latency_s = resp->latency_s;
      g.http_attempts = resp->attempts;
      g.usage = Json::object();
      if (resp->prompt_tokens) g.usage["prompt_tokens"] = *resp->prompt_tokens;
      if (resp->completion_tokens) g.usage["completion_tokens"] = *resp->completion_tokens;
      if (!resp->finish_reason.empty()) g.usage["finish_reason"] = resp->finish_reason;
      g.outcome = role == "generator" ? "pending" : "reflection";
    } else {
      g.error = resp.error().empty() ? "the call failed" : resp.error();
      g.outcome = "call_failed";
      result_.call_error = role + " call failed: " + g.error;
    }
    Save(g);
    return g;
  }

  void Save(GenerationRecord& g) {
    if (Status st = seams_.log->Record(g); !st && result_.infra_error.empty())
      result_.infra_error = "cannot record a call: " + st.error();
  }

  std::string ParentOf(int k, const std::vector<Offspring>& previous) const {
    auto best = BestCorrect(result_.offsprings, 1);
    if (!best.empty()) return result_.offsprings[best.front()].label;
    if (previous.empty()) return "";
    return previous[static_cast<size_t>(k) % previous.size()].label;
  }

  Offspring Generate(int it, int k, const std::vector<Offspring>& previous) {
    Offspring o;
    o.iteration = it;
    o.index = k;
    o.label = "iter" + std::to_string(it) + "_" + std::to_string(k);
    o.parent = it == 1 ? "" : ParentOf(k, previous);
    TemplateValues values = Values(it, o.parent);
    values["ancestors"] = Ancestors();
    values["history"] = History(previous);
    auto messages = Messages(it == 1 ? prompts_.generate : prompts_.optimize, values);
    if (!messages) {
      result_.infra_error = messages.error();
      return o;
    }
    GenerationRecord g = Call(it, k, "generator", o.parent, *messages);
    if (!g.error.empty()) return o;
    o.answered = true;
    if (Stopped()) return o;
    auto code = seams_.extract(g.response);
    Result<std::string> source = code ? pipeline_.CandidateSource(*code) : Result<std::string>(Error{code.error()});
    if (!source) {
      o.feedback = FormatNoCode(source.error(), s_.limits);
      g.outcome = "no_code";
      Save(g);
      return o;
    }
    o.code = *code;
    const std::string path = seams_.candidate_dir + "/" + o.label + prompts_.format.file_extension;
    if (Status st = WriteFileAtomic(path, *source); !st) {
      result_.infra_error = "cannot write candidate " + path + ": " + st.error();
      return o;
    }
    auto attempt = seams_.evaluator->Evaluate(task_, path);
    if (!attempt) {
      result_.infra_error = attempt.error();
      return o;
    }
    o.attempt = std::move(*attempt);
    if (o.attempt->status == "infra_error") {  // not the candidate's: verify it again later
      result_.call_error = "verification of " + o.label + " ended in infra_error: " + o.attempt->message;
      result_.call_infra = true;
    }
    o.feedback = FormatFeedback(*o.attempt, s_.limits);
    g.outcome = o.attempt->status;
    g.candidate_path = path;
    g.attempt_id = o.attempt->id;
    Save(g);
    return o;
  }

  void Reflect(Offspring& o) {
    if (!o.answered) return;  // nothing was answered: nothing to reflect on
    TemplateValues values = Values(o.iteration, o.label);
    values["candidate"] = o.code.empty() ? "(the answer held no usable code)\n" : Code(o.code);
    values["feedback"] = o.feedback;
    values["verdict"] = Verdict(o);
    auto messages = Messages(prompts_.reflect, values);
    if (!messages) {
      result_.infra_error = messages.error();
      return;
    }
    GenerationRecord g = Call(o.iteration, o.index, "reflector", o.label, *messages);
    if (g.error.empty()) o.reflection = Truncate(g.response, s_.limits.diagnostics);
  }

  const TaskFile& task_;
  const PromptSet& prompts_;
  const Pipeline& pipeline_;
  const LoopSettings& s_;
  const LoopSeams& seams_;
  const std::atomic<bool>* stop_;
  LoopResult result_;
};

}  // namespace

std::vector<size_t> BestCorrect(const std::vector<Offspring>& all, size_t n) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].correct()) idx.push_back(i);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    const auto& sa = all[a].attempt->speedup;
    const auto& sb = all[b].attempt->speedup;
    if (sa && sb) return *sa > *sb;
    return sa.has_value() && !sb.has_value();
  });
  if (idx.size() > n) idx.resize(n);
  return idx;
}

LoopResult RunLoop(const TaskFile& task, const PromptSet& prompts, const Pipeline& pipeline,
                   const LoopSettings& settings, const LoopSeams& seams,
                   const std::atomic<bool>* stop) {
  return Loop(task, prompts, pipeline, settings, seams, stop).Run();
}

}  // namespace kvault::agent
