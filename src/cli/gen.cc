// kvault gen: LLM generation over a suite (docs/cli.md, docs/agent.md).
#include <csignal>
#include <filesystem>
#include <iostream>
#include <thread>
#include <utility>

#include "agent/gen_runner.h"
#include "agent/lane_evaluator.h"
#include "candidate/candidate.h"
#include "cli/commands.h"
#include "cli/gen_output.h"
#include "cli/lanes.h"
#include "engine/candidate_build.h"
#include "llm/answer.h"
#include "llm/openai_client.h"
#include "util/files.h"
#include "util/json.h"

namespace kvault::cli {
namespace {

std::atomic<bool> g_stop{false};
extern "C" void OnStopSignal(int) { g_stop.store(true); }

// The first SIGINT/SIGTERM asks the run to stop after the calls in flight; the
// handler is reset by it, so a second one ends the process at once.
void InstallStopHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

std::string DefaultHardware(Backend b) {
  switch (b) {
    case Backend::kCuda: return "h200";
    case Backend::kHip: return "mi300x";
    default: return "cpu";
  }
}

int Misuse(const std::string& why) {
  std::cerr << "kvault gen: " << why << "\n";
  return kExitMisuse;
}

// Budget flags -> loop settings; nullopt (after printing why) on a conflict.
std::optional<agent::LoopSettings> MakeLoopSettings(const GenFlags& f) {
  agent::LoopSettings s;
  if (f.preset == "paper" && (f.offsprings || f.iterations)) {
    std::cerr << "kvault gen: --preset paper fixes --offsprings 1 --iterations 3; give one or the other\n";
    return std::nullopt;
  }
  s.offsprings = f.offsprings.value_or(1);
  s.iterations = f.iterations.value_or(3);
  s.ancestors = f.ancestors.value_or(3);
  s.max_perf_debug = f.perf_debug.value_or(-1);
  s.model = f.model;
  s.temperature = f.temperature;
  s.max_tokens = f.max_tokens;
  return s;
}

// kernel2kernel: each task's baseline source from --baseline, by file stem.
Result<std::map<std::string, std::string>> ReadBaselines(const std::string& dir,
                                                         const std::vector<TaskFile>& tasks) {
  std::vector<std::string> names;
  for (const TaskFile& t : tasks) names.push_back(t.name);
  std::vector<std::string> unmatched;
  auto matches = MatchCandidates(dir, names, &unmatched);
  if (!matches) return Error{matches.error()};
  std::map<std::string, std::string> out;
  for (const CandidateMatch& m : *matches) {
    if (out.count(m.task)) continue;  // the first by path
    auto text = ReadFile(m.path);
    if (!text) return Error{"baseline " + m.path + ": " + text.error()};
    out[m.task] = std::move(*text);
  }
  return out;
}

// The prompt format and language for --format/--lang: `--lang triton` is the Triton
// format, whose candidates are Python files (prompts/<version>/formats/triton-python.md);
// `--format native` writes native-format sources (docs/native-format.md). Both need
// --mode torch2kernel. Error (a misuse) for a combination no pipeline can verify.
Result<std::pair<std::string, std::string>> ResolveFormat(const GenFlags& f) {
  std::string format = f.format, lang = f.lang;
  if (lang == "triton") {
    if (!format.empty() && format != "triton")
      return Error{"--lang triton writes Triton candidates; drop --format " + format + " (or give --format triton)"};
    format = "triton";
    lang = "python";
  }
  if (format.empty()) format = f.mode == "modu2func" ? "functional" : "extension";
  if ((format == "triton" || format == "native") && f.mode != "torch2kernel")
    return Error{"the " + format + " format is generated with --mode torch2kernel only, not --mode " + f.mode};
  if (format == "native" && lang != "cpp" && lang != "cuda" && lang != "hip")
    return Error{"--format native needs --lang cpp, cuda or hip, not '" + lang + "'"};
  return std::make_pair(format, lang);
}

// gen's policy when --policy is not given (docs/adversarial.md, "Policy"): a generated
// kernel must run a kernel of its own, since a reward for calling PyTorch's operator
// would teach a model to call it; modu2func's answers are PyTorch code by design.
std::string GenPolicy(const std::string& mode) { return mode == "modu2func" ? kPolicyTask : "custom_kernel"; }

// Tasks stopped by a failed LLM call or an infra_error verification: not the tasks'
// fault, so the run is not done.
// Says so on stderr, with the first error; true when there were any.
bool ReportFailedCalls(const std::vector<agent::GenTaskSummary>& summaries, const std::string& run) {
  size_t n = 0;
  const agent::GenTaskSummary* first = nullptr;
  for (const auto& s : summaries) {
    if (s.call_error.empty()) continue;
    if (!first) first = &s;
    ++n;
  }
  if (!first) return false;
  std::cerr << "kvault gen: " << n << " task(s) stopped by a failed LLM call or an infra_error "
            << "(not the tasks' fault); the first, " << first->task << ": " << first->call_error << "\n"
            << "kvault gen: once the cause is fixed, run the same command with --resume (--run "
            << run << ") to call or verify again\n";
  return true;
}

// `gen --list`: the tasks gen would take, in its order, one line each
// (`task<TAB>task file`), or with --json one document (docs/cli.md).
void PrintGenTasks(std::ostream& out, const GenFlags& flags, const std::vector<TaskFile>& tasks) {
  Json listed = Json::array();
  for (const TaskFile& t : tasks) {
    if (!flags.common.json) out << t.name << "\t" << t.path << "\n";
    listed.push_back({{"task", t.name}, {"task_path", t.path}});
  }
  std::error_code ec;
  if (flags.common.json)
    out << DumpJson({{"suite", std::filesystem::absolute(flags.suite, ec).string()}, {"tasks", std::move(listed)}})
        << std::endl;
}

}  // namespace

int RunGen(const GenFlags& flags) {
  if (!flags.list)  // CLI11 cannot require them but with --list
    for (const auto& [flag, value] : {std::pair{"--endpoint", &flags.endpoint}, std::pair{"--model", &flags.model},
                                      std::pair{"--lang", &flags.lang}})
      if (value->empty()) return Misuse(std::string(flag) + " is required");
  auto suite = DiscoverSuite(flags.suite);
  if (!suite) return Misuse(suite.error());
  auto picked = FilterTasks(*suite, flags.tasks);
  if (!picked) return Misuse(picked.error());
  std::vector<TaskFile> tasks = std::move(*picked);
  if (flags.max_tasks > 0 && tasks.size() > static_cast<size_t>(flags.max_tasks))
    tasks.resize(flags.max_tasks);
  if (flags.list) {  // nothing called, nothing opened but the suite's files
    PrintGenTasks(std::cout, flags, tasks);
    return kExitOk;
  }
  const bool whole_suite = tasks.size() == suite->size();
  auto loop = MakeLoopSettings(flags);
  if (!loop) return kExitMisuse;
  CommonFlags common = flags.common;
  if (common.policy.empty()) common.policy = GenPolicy(flags.mode);
  int options_exit = kExitOk;
  auto options = MakeOptions(common, false, &options_exit);
  if (!options) return options_exit;
  auto jobs = ParseJobs(flags.jobs, options->backend, std::thread::hardware_concurrency());
  if (!jobs) return Misuse(jobs.error());

  agent::PromptSelection sel;
  sel.root = flags.prompts.empty() ? options->source_root + "/prompts" : flags.prompts;
  sel.version = flags.prompt_version;
  sel.mode = flags.mode;
  auto format = ResolveFormat(flags);
  if (!format) return Misuse(format.error());
  sel.format = format->first;
  sel.lang = format->second;
  // Every answer in a language this backend cannot run would be `unsupported`: said
  // before the first LLM call, not after the budget is spent.
  if (std::string why = BackendMismatch(sel.lang, options->backend); !why.empty())
    return Misuse("--lang " + flags.lang + " cannot be verified on backend " +
                  std::string(ToString(options->backend)) + ": " + why +
                  "; run gen where that backend is (--backend), or ask for a language this one runs");
  sel.hardware = flags.hardware.empty() ? DefaultHardware(options->backend) : flags.hardware;
  auto prompts = agent::LoadPromptSet(sel);
  if (!prompts) return Misuse(prompts.error());

  llm::ClientSettings client_settings;
  client_settings.endpoint = flags.endpoint;
  client_settings.api_key_env = flags.api_key_env;
  client_settings.request_timeout_s = flags.timeout_s;
  client_settings.connect_timeout_s = std::min(10.0, flags.timeout_s);
  client_settings.max_retries = flags.retries;
  client_settings.concurrency = flags.concurrency;
  if (Status ok = llm::CheckOpenAiSettings(client_settings); !ok) return Misuse(ok.error());

  agent::GenSettings settings;
  settings.run = flags.run;
  settings.mode = flags.mode;
  settings.loop = *loop;
  settings.jobs = *jobs;
  settings.concurrency = flags.concurrency;
  settings.resume = flags.resume;
  if (flags.mode == "kernel2kernel") {
    if (flags.baseline.empty()) return Misuse("--mode kernel2kernel needs --baseline DIR");
    auto baselines = ReadBaselines(flags.baseline, tasks);
    if (!baselines) return Misuse(baselines.error());
    if (baselines->empty()) return Misuse("no baseline in " + flags.baseline + " matches a task");
    settings.baselines = std::move(*baselines);
  }
  settings.recorded_settings = {{"mode", flags.mode},         {"format", sel.format},
                                {"lang", flags.lang},         {"hardware", sel.hardware},
                                {"model", flags.model},       {"endpoint", flags.endpoint},
                                {"offsprings", loop->offsprings}, {"iterations", loop->iterations},
                                {"ancestors", loop->ancestors},   {"perf_debug", loop->max_perf_debug},
                                {"backend", std::string(ToString(options->backend))},
                                {"policy", options->policy}};
  if (whole_suite)  // the denominator `kvault score` takes for the run (docs/scoring.md)
    settings.recorded_settings["suite"] = std::filesystem::absolute(flags.suite).lexically_normal().string();

  const std::string db_path = ResolveDbPath(flags.db);
  auto store = Store::Open(db_path);
  if (!store) {
    std::cerr << "kvault gen: " << store.error() << "\n";
    return kExitInfra;
  }
  auto log = GenerationLog::Open(db_path);
  if (!log) {
    std::cerr << "kvault gen: " << log.error() << "\n";
    return kExitInfra;
  }
  auto existing = (*log)->ListTasks(flags.run);
  if (!existing) {
    std::cerr << "kvault gen: " << existing.error() << "\n";
    return kExitInfra;
  }
  if (!existing->empty() && !flags.resume)
    return Misuse("run '" + flags.run + "' already has generation records in " + db_path +
                  "; pass --resume to continue it, or name another --run");
  std::filesystem::path db_dir = std::filesystem::absolute(db_path).parent_path();
  settings.gen_dir = (db_dir / "gen" / flags.run).string();

  auto client = llm::MakeOpenAiClient(client_settings);
  agent::LaneEvaluator evaluator(*options, flags.run, **store, *jobs);
  llm::ExtractOptions extract_options;
  extract_options.expected_language = prompts->format.fence;
  agent::GenSeams seams{client.get(),
                        [&](std::string_view answer) -> Result<std::string> {
                          auto code = llm::ExtractCode(answer, extract_options);
                          if (!code) return Error{code.error()};
                          return code->code;
                        },
                        &evaluator, log->get()};

  std::cerr << "kvault gen: " << tasks.size() << " task(s), mode " << flags.mode << ", "
            << prompts->format.name << " on backend " << ToString(options->backend) << ", model "
            << flags.model << ", " << loop->offsprings << " offspring(s) x " << loop->iterations
            << " iteration(s), prompts " << prompts->version << ", run '" << flags.run << "'"
            << (!flags.resume        ? ""
                : existing->empty() ? " (--resume, but the store has nothing of this run yet: starting it)"
                                    : " (resumed)")
            << "\n";
  InstallStopHandlers();
  auto summaries = agent::RunGeneration(tasks, *prompts, settings, seams, &g_stop,
                                        [&](const agent::GenProgress& p) { PrintGenProgress(std::cerr, p); });
  if (!summaries) {
    std::cerr << "kvault gen: " << summaries.error() << "\n";
    return kExitInfra;
  }
  if (flags.common.json) {
    for (const auto& s : *summaries) std::cout << s.ToJson().dump() << "\n";
    std::cout << std::flush;
  } else {
    PrintGenTable(std::cout, *summaries);
  }
  PrintGenTotals(flags.common.json ? std::cerr : std::cout, *summaries);
  if (g_stop.load()) {
    std::cerr << "kvault gen: interrupted; continue with --resume --run " << flags.run << "\n";
    return kExitInterrupted;
  }
  return ReportFailedCalls(*summaries, flags.run) ? kExitInfra : kExitOk;
}

}  // namespace kvault::cli
