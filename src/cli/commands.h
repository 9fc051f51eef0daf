#pragma once
// The kvault subcommands (docs/cli.md). Each returns the process exit code:
// 0 the engine did its job (whatever the kernels' outcomes), 2 misuse,
// 3 infrastructure failure.
#include <optional>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/options.h"

namespace kvault::cli {

constexpr int kExitOk = 0;
constexpr int kExitRejected = 1;  // verify --fail-on-reject: the candidate did not pass
constexpr int kExitMisuse = 2;
constexpr int kExitInfra = 3;
constexpr int kExitInterrupted = 130;  // stopped by SIGINT/SIGTERM; the same command continues

// The run name of every command that records attempts, when --run names none.
inline constexpr const char* kDefaultRun = "default";

struct CommonFlags {
  std::string backend = "auto";  // auto|cpu|cuda|hip
  std::string arch;
  std::string reward = "paper";
  bool json = false;
  bool no_timing = false;
  int run_timeout_s = 0;      // 0: the default (docs/cli.md)
  int compile_timeout_s = 0;
  int load_timeout_s = 0;
  // any | fused | custom_kernel | task (the task's KVAULT_META policy); gen: empty, by --mode.
  std::string policy = kPolicyTask;
  // task (each task's own, docs/task-format.md) | kernelbench (atol = rtol = 1e-2, as
  // KernelBench's harness); --atol / --rtol set one of them for every task.
  std::string tolerance = "task";
  std::optional<double> atol, rtol;
};

// When MakeOptions checks that an explicit GPU backend is usable.
enum class BackendCheck {
  kNow,        // before it returns: one worker started and asked (PyTorch's import, seconds)
  kByWorkers,  // not: the caller's own workers open the backend first thing, and the
               // caller asks BackendUnusable only when none of them could start
};

// Resolves flags and environment into engine options; prints the reason and returns
// nullopt, with `*exit_code` set, when they cannot be used: misuse, no usable backend
// (auto-detection failed, or, with BackendCheck::kNow, an explicit GPU backend this
// machine's PyTorch cannot run; both kExitMisuse), or a cache folder that cannot be
// written (kExitInfra).
std::optional<EngineOptions> MakeOptions(const CommonFlags& flags, bool compile_only, int* exit_code,
                                         BackendCheck check = BackendCheck::kNow);

// Why `o`'s GPU backend is not usable here, worded as MakeOptions says it (for the
// exit kExitMisuse); nullopt for the cpu backend and for a usable one. Starts a worker.
std::optional<std::string> BackendUnusable(const EngineOptions& o);
// BackendUnusable said on stderr ("kvault: why"), as MakeOptions says it: true when the
// backend is unusable, and the command then exits kExitMisuse.
bool ReportBackendUnusable(const EngineOptions& o);

int RunDoctor(bool json);

struct VerifyFlags {
  CommonFlags common;
  std::string task, candidate;
  bool compile_only = false;
  bool fail_on_reject = false;  // exit kExitRejected unless the candidate passed
  std::optional<std::string> db;
  std::string run;              // needs db; empty: kDefaultRun
};
int RunVerify(const VerifyFlags& flags);

struct EvalFlags {
  CommonFlags common;
  std::string suite, candidates;
  std::vector<std::string> tasks;  // wildcards of task names; empty: every task
  std::string jobs = "auto";       // lanes: a number, or auto (cli/lanes.h)
  int compile_jobs = -1;  // -1: one per CPU core; 0: lanes build as they go
  std::string run = kDefaultRun;
  std::optional<std::string> db;
  bool force = false;
  bool list = false;  // print the jobs (task, candidate, format) instead of verifying
};
int RunEval(const EvalFlags& flags);

// `kvault gen` (docs/cli.md, docs/agent.md).
struct GenFlags {
  CommonFlags common;
  std::string suite, endpoint, model, lang;
  std::string mode = "torch2kernel";
  std::string format;             // Default: extension (functional for modu2func)
  std::string hardware;           // Default: by backend (cpu, h200, mi300x)
  std::string preset;             // "" | "paper"
  std::optional<int> offsprings, iterations, ancestors, perf_debug;
  std::string run = kDefaultRun;
  std::optional<std::string> db;
  bool resume = false;
  std::string api_key_env;
  std::vector<std::string> tasks;  // wildcards of task names; empty: every task
  std::string jobs = "auto";       // verification lanes: a number, or auto (cli/lanes.h)
  int concurrency = 4, max_tasks = 0, retries = 2;
  double timeout_s = 600;         // one LLM HTTP call
  std::optional<double> temperature;
  std::optional<int> max_tokens;
  std::string prompts;            // Default: <source root>/prompts
  std::string prompt_version = "v1";
  std::string baseline;           // kernel2kernel: folder of baseline kernels
  bool list = false;              // print the tasks gen would take (--tasks, --max-tasks) instead
};
int RunGen(const GenFlags& flags);

// `kvault serve` (docs/serve.md).
struct ServeFlags {
  CommonFlags common;
  std::string host = "127.0.0.1";
  int port = 8470;
  std::string devices = "0";
  int lanes_per_device = 0;       // 0: 1 on the CPU, 6 on a GPU
  size_t queue = 4096;
  int compile_jobs = -1;
  std::optional<std::string> db;
  std::string run = kDefaultRun;
  std::string token_file;
  int max_request_mb = 32;
  std::string triton_suite, triton_format = "tritonbench-g";
  std::string work_dir;           // Default: <db>.serve
};
int RunServe(const ServeFlags& flags);

// Shared by score, compare and report (docs/scoring.md).
struct ScoreFlags {
  std::string suite;              // empty: the tasks the runs attempted (compare, report)
  std::vector<std::string> runs;  // score: one; compare: two; report: one or more
  std::vector<int> ks{1};
  std::optional<std::string> db;
  bool json = false;
  int resamples = 2000;
  uint64_t seed = 20250131;
  std::string output;             // report: the HTML file
};
int RunScore(const ScoreFlags& flags);

// `kvault export` (docs/export.md).
struct ExportFlags {
  std::vector<std::string> runs;  // empty: every run of the store
  std::optional<std::string> db;
  std::string format = "jsonl";   // jsonl | csv | parquet
  std::string output = "-";       // "-": stdout (jsonl, csv)
  std::vector<std::string> candidates;  // non-empty: only attempts of these candidate hashes
  std::string since;                    // non-empty: only attempts stored at or after (ISO-8601 UTC)
};
int RunExport(const ExportFlags& flags);

// `kvault import`: JSON Lines of `kvault export` into a store (docs/export.md).
struct ImportFlags {
  std::vector<std::string> inputs;  // files; "-": stdin
  std::optional<std::string> db;
  bool ack = false;                 // "ok <line>" on stdout after each row is stored
};
int RunImport(const ImportFlags& flags);
int RunCompare(const ScoreFlags& flags);
int RunReport(const ScoreFlags& flags);

}  // namespace kvault::cli
