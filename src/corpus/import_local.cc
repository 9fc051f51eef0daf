// Importers of this project's own files (docs/corpus.md "Import"): a kvault store
// (eval, gen and serve attempts, with gen's model and prompt), GEAK-eval task folders
// and KernelBench-format ModelNew folders.
#include <algorithm>
#include <filesystem>
#include <map>

#include "candidate/candidate.h"
#include "corpus/import_sink.h"
#include "corpus/reverify.h"
#include "score/samples.h"
#include "store/generation_log.h"
#include "store/store.h"
#include "task/task_file.h"
#include "util/files.h"

namespace kvault::corpus {
namespace {

namespace fs = std::filesystem;

// The suite's sources by task name; empty without a suite.
Result<std::map<std::string, TaskFile>> SuiteByName(const std::string& suite) {
  std::map<std::string, TaskFile> out;
  if (suite.empty()) return out;
  auto tasks = DiscoverSuite(suite);
  if (!tasks) return Error{tasks.error()};
  for (TaskFile& t : *tasks) out.emplace(t.name, std::move(t));
  return out;
}

// The generator call that wrote each attempt of a run, by attempt id.
Result<std::map<int64_t, GenerationRecord>> GeneratorCalls(GenerationLog& log, const std::string& run) {
  std::map<int64_t, GenerationRecord> out;
  auto calls = log.ListRun(run);
  if (!calls) return Error{calls.error()};
  for (GenerationRecord& g : *calls)
    if (g.role == "generator" && g.attempt_id) out[*g.attempt_id] = std::move(g);
  return out;
}

std::string LastUserMessage(const Json& prompt) {
  std::string out;
  if (!prompt.is_array()) return out;
  for (const Json& m : prompt)
    if (m.is_object() && m.value("role", "") == "user" && m.contains("content") && m["content"].is_string())
      out = m["content"].get<std::string>();
  return out;
}

Status ImportRun(const std::string& path, const std::string& run, Store& store, GenerationLog& log,
                 const std::map<std::string, TaskFile>& suite, ImportSink& sink) {
  auto attempts = store.ListRun(run);
  if (!attempts) return Error{attempts.error()};
  // A serve run or a cluster campaign names its tasks `<label>-<hash12>`: named as
  // `kvault score` names them (the suite's task of that content, else the label), so
  // their references are found and their records group with eval's.
  std::vector<score::SuiteTask> suite_tasks;
  for (const auto& [name, task] : suite) suite_tasks.push_back({name, task.hash});
  score::NameServeTasks(*attempts, suite_tasks);
  auto calls = GeneratorCalls(log, run);
  if (!calls) return Error{calls.error()};
  std::vector<KernelRecord> records;
  std::map<std::pair<std::string, std::string>, std::string> id_of_sample;  // (task, sample) -> id
  std::vector<std::string> parent_sample;
  std::vector<int64_t> attempt_ids;  // the origin row of each record
  for (const AttemptRecord& a : *attempts) {
    if (a.candidate_source.empty()) {
      sink.Skip(path, a.id, "attempt " + std::to_string(a.id) + " holds no candidate source");
      continue;
    }
    KernelRecord r;
    r.task.name = a.task;
    r.task.reference_sha256 = a.task_hash;
    auto t = suite.find(a.task);
    if (t != suite.end() && t->second.hash == a.task_hash) r.task.reference_source = t->second.source;
    r.candidate_source = a.candidate_source;
    r.language = a.language;
    r.format = a.format;
    r.arch = a.arch;
    r.provenance.pipeline = "eval";
    r.provenance.source = "kvault run " + run;
    std::string parent;
    if (auto g = calls->find(a.id); g != calls->end()) {
      r.provenance.pipeline = "gen";
      r.provenance.model = g->second.model_returned.empty() ? g->second.model_requested : g->second.model_returned;
      r.provenance.prompt = LastUserMessage(g->second.prompt);
      parent = g->second.parent;
    }
    // A task_error / infra_error says nothing about the kernel: no result.
    if (a.status != "task_error" && a.status != "infra_error") r.results.push_back(ResultFromAttempt(a));
    FinishRecord(r);
    id_of_sample[{a.task, a.sample}] = r.id;
    parent_sample.push_back(parent);
    attempt_ids.push_back(a.id);
    records.push_back(std::move(r));
  }
  for (size_t i = 0; i < records.size(); ++i) {
    if (parent_sample[i].empty()) continue;
    auto p = id_of_sample.find({records[i].task.name, parent_sample[i]});
    // A child that repeats its parent's code is the same record: no parent of itself.
    if (p != id_of_sample.end() && p->second != records[i].id) records[i].provenance.parent_id = p->second;
  }
  for (size_t i = 0; i < records.size(); ++i)
    if (Status s = sink.Add(std::move(records[i]), path, attempt_ids[i]); !s) return s;
  return Status::Ok();
}

// The *.py files of a folder, `_*` left out, sorted; none when it does not exist.
std::vector<fs::path> PythonFiles(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".py" && !e.path().filename().string().starts_with("_")) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

KernelRecord GeakRecord(GeakFormat format, const std::string& task, const std::string& reference,
                        const std::string& candidate) {
  KernelRecord r;
  r.task.name = task;
  r.task.reference_source = reference;
  r.candidate_source = candidate;
  r.language = "triton";
  r.format = "triton";
  r.provenance.pipeline = "geak";
  r.provenance.source = std::string(ToString(format));
  return r;
}

}  // namespace

Status ImportStoreFile(const std::string& path, ImportSink& sink) {
  if (!FileExists(path)) return Error{path + ": no such store file"};
  auto store = Store::Open(path);
  if (!store) return Error{store.error()};
  auto log = GenerationLog::Open(path);
  if (!log) return Error{log.error()};
  auto suite = SuiteByName(sink.options().suite);
  if (!suite) return Error{suite.error()};
  auto runs = (*store)->ListRuns();
  if (!runs) return Error{runs.error()};
  for (const std::string& run : *runs)
    if (Status s = ImportRun(path, run, **store, **log, *suite, sink); !s) return s;
  return Status::Ok();
}

Status ImportKernelBenchFolder(const std::string& path, ImportSink& sink) {
  if (sink.options().suite.empty()) return Error{"--from kernelbench needs --suite (the tasks' references)"};
  auto suite = SuiteByName(sink.options().suite);
  if (!suite) return Error{suite.error()};
  std::vector<std::string> names;
  for (const auto& [name, task] : *suite) names.push_back(name);
  std::vector<std::string> unmatched;
  auto matches = MatchCandidates(path, names, &unmatched);
  if (!matches) return Error{matches.error()};
  for (const std::string& u : unmatched) sink.Skip(u, 0, "no task of the suite");
  for (const CandidateMatch& m : *matches) {
    auto candidate = LoadCandidate(m.path);
    if (!candidate) {
      sink.Malformed(m.path, 0, candidate.error());
      continue;
    }
    const TaskFile& task = suite->at(m.task);
    KernelRecord r;
    r.task.name = task.name;
    r.task.reference_source = task.source;
    r.candidate_source = candidate->source;
    r.language = candidate->language;
    r.format = std::string(ToString(candidate->format));
    r.provenance.pipeline = "kernelbench";
    r.provenance.source = "kernelbench folder " + path;
    if (Status s = sink.Add(std::move(r), m.path, 0); !s) return s;
  }
  return Status::Ok();
}

Status ImportGeakFolder(const std::string& path, ImportSink& sink) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return Error{path + ": not a folder of GEAK-eval files"};
  // A folder of task files, or one holding tasks/ and candidates/ (import-geak's input).
  const fs::path tasks_dir = fs::is_directory(fs::path(path) / "tasks", ec) ? fs::path(path) / "tasks" : fs::path(path);
  const GeakFormat format = sink.options().geak;
  std::map<std::string, std::pair<GeakParts, std::string>> tasks;  // stem -> parts, task file text
  for (const fs::path& file : PythonFiles(tasks_dir)) {
    auto text = ReadFile(file.string());
    auto parts = text ? SplitGeakFile(*text) : Result<GeakParts>(Error{text.error()});
    if (!parts) {
      sink.Malformed(file.string(), 0, parts.error());
      continue;
    }
    // The file's own implementation is a kernel; its trusted tests make the task.
    KernelRecord r = GeakRecord(format, file.stem().string(), MakeGeakTask(format, file.filename().string(), *parts),
                                MakeGeakCandidate(format, parts->implementation, *parts));
    tasks.emplace(file.stem().string(), std::make_pair(*parts, r.task.reference_source));
    if (Status s = sink.Add(std::move(r), file.string(), 0); !s) return s;
  }
  if (tasks.empty()) return Error{path + ": no GEAK-eval task file (*.py with a 146-'#' separator)"};
  for (const fs::path& file : PythonFiles(fs::path(path) / "candidates")) {
    const std::string name = file.filename().string();  // <task>.py or <task>.<label>.py
    auto task = tasks.find(name.substr(0, name.find('.')));
    if (task == tasks.end()) {
      sink.Skip(file.string(), 0, "no task of this name");
      continue;
    }
    auto text = ReadFile(file.string());
    auto implementation = text ? CandidateImplementation(*text) : Result<std::string>(Error{text.error()});
    if (!implementation) {
      sink.Malformed(file.string(), 0, implementation.error());
      continue;
    }
    KernelRecord r = GeakRecord(format, task->first, task->second.second,
                                MakeGeakCandidate(format, *implementation, task->second.first));
    if (Status s = sink.Add(std::move(r), file.string(), 0); !s) return s;
  }
  return Status::Ok();
}

}  // namespace kvault::corpus
