// kvault: the command line (docs/cli.md).
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/cache_cmd.h"
#include "cli/commands.h"
#include "cli/corpus_cmd.h"
#include "cli/flag_hint.h"
#include "cli/gen_flags.h"
#include "cli/import_geak.h"
#include "cli/lanes.h"
#include "kvault/build_config.h"
#include "sandbox/capabilities.h"
#include "sandbox/exec.h"

namespace {

void AddCommon(CLI::App* app, kvault::cli::CommonFlags& f, bool with_json = true) {
  app->add_option("--backend", f.backend, "cpu | cuda | hip | auto (Default: auto)")
      ->check(CLI::IsMember({"auto", "cpu", "cuda", "hip"}));
  app->add_option("--arch", f.arch, "target architecture, e.g. sm_90, gfx942, gfx90a");
  app->add_option("--reward", f.reward, "paper | hip-rl (Default: paper)")
      ->check(CLI::IsMember({"paper", "hip-rl"}));
  if (with_json) app->add_flag("--json", f.json, "machine-readable output");
  app->add_flag("--no-timing", f.no_timing, "check correctness only");
  app->add_option("--run-timeout", f.run_timeout_s, "seconds per run of one case and seed (Default: 60)")
      ->check(CLI::Range(1, 86400));
  app->add_option("--load-timeout", f.load_timeout_s, "seconds to load a candidate (Default: 300)")
      ->check(CLI::Range(1, 86400));
  app->add_option("--compile-timeout", f.compile_timeout_s, "seconds per build (Default: 300)")
      ->check(CLI::Range(1, 86400));
  app->add_option("--policy", f.policy,
                  "custom-kernel policy: any | fused | custom_kernel | task (the task's own) (Default: " +
                      (f.policy.empty() ? std::string("custom_kernel; task for --mode modu2func") : f.policy) +
                      ")")
      ->check(CLI::IsMember({"any", "fused", "custom_kernel", kvault::kPolicyTask}));
  app->add_option("--tolerance", f.tolerance,
                  "task (each task's own) | kernelbench (atol = rtol = 1e-2, as KernelBench's harness) "
                  "(Default: task)")
      ->check(CLI::IsMember({"task", "kernelbench"}));
  app->add_option("--atol", f.atol, "absolute tolerance for every task's outputs (overrides --tolerance)")
      ->check(CLI::Range(0.0, 1e9));
  app->add_option("--rtol", f.rtol, "relative tolerance for every task's outputs (overrides --tolerance)")
      ->check(CLI::Range(0.0, 1e9));
}

}  // namespace

int main(int argc, char** argv) {
  // The sandbox helper (docs/sandbox.md) runs before anything else in this process.
  if (argc >= 2 && std::string_view(argv[1]) == "sandbox-exec")
    return kvault::SandboxExecMain(argc - 2, argv + 2);
  kvault::DeclareSandboxLauncher();  // workers' sandbox-exec comes back here
  CLI::App app{"kvault: verify GPU kernels against PyTorch references"};
  app.set_version_flag("--version", std::string("kvault ") + KVAULT_VERSION);
  app.require_subcommand(1);

  bool doctor_json = false;
  auto* doctor = app.add_subcommand("doctor", "toolchains, devices and usable backends");
  doctor->add_flag("--json", doctor_json, "machine-readable output");

  kvault::cli::VerifyFlags vf;
  auto* verify = app.add_subcommand("verify", "verify one candidate against one task");
  verify->add_option("--task", vf.task, "task file (KernelBench format)")->required();
  verify->add_option("--candidate", vf.candidate, "candidate file")->required();
  verify->add_flag("--compile-only", vf.compile_only, "build only (works without a GPU)");
  verify->add_option("--db", vf.db, "also record the attempt in this store");
  verify->add_option("--run", vf.run, "run name for --db; needs --db (Default: default)");
  verify->add_flag("--fail-on-reject", vf.fail_on_reject,
                   "exit 1 unless the candidate passed (compiled, with --compile-only)");
  AddCommon(verify, vf.common);

  kvault::cli::EvalFlags ef;
  auto* eval = app.add_subcommand("eval", "verify a folder of candidates against a suite");
  eval->add_option("--suite", ef.suite, "folder of task files")->required();
  eval->add_option("--candidates", ef.candidates, "folder of candidates named <task>[.<label>].<ext>")
      ->required();
  eval->add_option("--jobs", ef.jobs, "parallel lanes: N or auto (Default: auto: 6 on a GPU, 1 per 4 CPU cores on the CPU)")
      ->check(CLI::Validator(kvault::cli::CheckJobsText, "N|auto"));
  eval->add_option("--tasks", ef.tasks, "only the suite's tasks these comma-separated wildcards name, e.g. 'level1/*,*relu*'")
      ->delimiter(',');
  eval->add_option("--compile-jobs", ef.compile_jobs,
                   "threads building candidates ahead of the lanes; 0: lanes build (Default: CPU cores)")
      ->check(CLI::Range(0, 1024));
  eval->add_option("--run", ef.run, "run name in the store (Default: default)");
  eval->add_option("--db", ef.db, "store path (Default: $KVAULT_DB, else ./kvault.db)");
  eval->add_flag("--force", ef.force, "re-verify candidates the store already has");
  eval->add_flag("--list", ef.list,
                 "print each candidate matched to a task (with --json: one document) and verify nothing");
  AddCommon(eval, ef.common);

  kvault::cli::ScoreFlags sf, cf, rf;
  auto add_score_flags = [](CLI::App* cmd, kvault::cli::ScoreFlags& f) {
    cmd->add_option("--k", f.ks, "comma-separated k values for pass@k, Comp@k, Corr@k (Default: 1)")
        ->delimiter(',')->check(CLI::Range(1, 1000000));
    cmd->add_option("--db", f.db, "store path (Default: $KVAULT_DB, else ./kvault.db)");
    cmd->add_option("--resamples", f.resamples, "bootstrap resamples, 0 for none (Default: 2000)")
        ->check(CLI::Range(0, 1000000));
    cmd->add_option("--seed", f.seed, "bootstrap seed (Default: 20250131)");
  };
  auto* score = app.add_subcommand("score", "pass@k, Comp@k, Corr@k, speedups and fast_p of a run");
  score->add_option("--suite", sf.suite,
                    "folder of task files, the denominator (Default: the suite `gen` recorded for the run, "
                    "else the tasks it attempted)");
  score->add_option("--run", sf.runs, "run name in the store (Default: default)")->expected(1);
  score->add_flag("--json", sf.json, "machine-readable output");
  add_score_flags(score, sf);

  auto* compare = app.add_subcommand("compare", "paired comparison of two runs on the same tasks");
  compare->add_option("--run", cf.runs, "run name; give exactly two")->required()->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  compare->add_option("--suite", cf.suite, "folder of task files (Default: the suite `gen` recorded for the runs, else the tasks they attempted)");
  compare->add_flag("--json", cf.json, "machine-readable output");
  add_score_flags(compare, cf);

  auto* report = app.add_subcommand("report", "write a self-contained HTML report of one or more runs");
  report->add_option("--run", rf.runs, "run name; repeat for several")->required()->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  report->add_option("--suite", rf.suite, "folder of task files (Default: the suite `gen` recorded for the runs, else the tasks they attempted)");
  report->add_option("-o,--output", rf.output, "the HTML file to write")->required();
  report->add_flag("--json", rf.json, "print what was written as JSON");
  add_score_flags(report, rf);

  kvault::cli::ExportFlags xf;
  auto* exporter = app.add_subcommand("export", "write runs' attempts as JSON Lines, CSV or Parquet");
  exporter->add_option("--run", xf.runs, "run name; repeat for several (Default: every run)")
      ->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  exporter->add_option("--db", xf.db, "store path (Default: $KVAULT_DB, else ./kvault.db)");
  exporter->add_option("--format", xf.format, "jsonl | csv | parquet (Default: jsonl)")
      ->check(CLI::IsMember({"jsonl", "csv", "parquet"}));
  exporter->add_option("-o,--output", xf.output, "file to write; - for stdout (Default: -)");
  exporter->add_option("--candidate", xf.candidates, "only attempts of this candidate hash; repeat for several")
      ->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  exporter->add_option("--since", xf.since, "only attempts stored at or after this UTC time (2026-12-02T04:00:00Z)");

  kvault::cli::ImportFlags imf;
  auto* importer = app.add_subcommand("import", "add attempts exported as JSON Lines by `kvault export` to a store");
  importer->add_option("inputs", imf.inputs, "JSON Lines files; - for stdin")->required();
  importer->add_option("--db", imf.db, "store path (Default: $KVAULT_DB, else ./kvault.db)");
  importer->add_flag("--ack", imf.ack, "print \"ok <line>\" after each row is stored");

  kvault::cli::GenFlags gf;
  auto* gen = kvault::cli::AddGenCommand(app, gf);
  AddCommon(gen, gf.common);

  kvault::cli::ImportGeakFlags gk;
  auto* import_geak = kvault::cli::AddImportGeakCommand(app, gk);

  kvault::cli::CacheFlags cachef;
  auto* cache = kvault::cli::AddCacheCommand(app, cachef);

  kvault::cli::CorpusFlags corpusf;
  auto* corpus = kvault::cli::AddCorpusCommand(app, corpusf);
  AddCommon(corpusf.verify_cmd, corpusf.common, /*with_json=*/false);

  kvault::cli::ServeFlags svf;
  svf.common.policy = "custom_kernel";
  auto* serve = app.add_subcommand("serve", "serve rewards over HTTP: native API, AMD's HIP and Triton protocols");
  serve->add_option("--host", svf.host, "address to bind; not loopback needs a token (Default: 127.0.0.1)");
  serve->add_option("--port", svf.port, "port; 0: any free one, printed on stdout (Default: 8470)")
      ->check(CLI::Range(0, 65535));
  serve->add_option("--devices", svf.devices, "comma-separated device indexes; lanes are spread over them (Default: 0)");
  serve->add_option("--lanes-per-device", svf.lanes_per_device, "verification lanes per device (Default: 1 on the CPU, 6 on a GPU)")
      ->check(CLI::Range(1, 64));
  serve->add_option("--queue", svf.queue, "most candidates waiting; more get 429 (Default: 4096)")
      ->check(CLI::Range(1, 1000000));
  serve->add_option("--compile-jobs", svf.compile_jobs, "threads building candidates ahead of the lanes; 0: lanes build (Default: CPU cores)")
      ->check(CLI::Range(0, 1024));
  serve->add_option("--db", svf.db, "store path (Default: $KVAULT_DB, else ./kvault.db)");
  serve->add_option("--run", svf.run, "run name of requests that give none (Default: default)");
  serve->add_option("--token-file", svf.token_file, "file holding the bearer token (Default: $KVAULT_SERVE_TOKEN)");
  serve->add_option("--max-request-mb", svf.max_request_mb, "largest request body (Default: 32)")->check(CLI::Range(1, 1024));
  serve->add_option("--triton-suite", svf.triton_suite, "GEAK folder that AMD's /evaluate names tasks from");
  serve->add_option("--triton-format", svf.triton_format, "tritonbench-g | rocmbench (Default: tritonbench-g)")
      ->check(CLI::IsMember({"tritonbench-g", "rocmbench"}));
  serve->add_option("--work-dir", svf.work_dir, "folder of the task and candidate files workers read (Default: <db>.serve)");
  AddCommon(serve, svf.common, /*with_json=*/false);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0) {
      // A mistyped flag: named, with the flag meant, instead of CLI11's "--x is required".
      if (std::string hint = kvault::cli::UnknownFlagHint(app, argc, argv); !hint.empty()) {
        std::fprintf(stderr, "%s\nRun with --help for more information.\n", hint.c_str());
        return kvault::cli::kExitMisuse;
      }
    }
    int code = app.exit(e);
    return code == 0 ? 0 : kvault::cli::kExitMisuse;
  }
  if (*doctor) return kvault::cli::RunDoctor(doctor_json);
  if (*verify) return kvault::cli::RunVerify(vf);
  if (*eval) return kvault::cli::RunEval(ef);
  if (*score) return kvault::cli::RunScore(sf);
  if (*compare) return kvault::cli::RunCompare(cf);
  if (*report) return kvault::cli::RunReport(rf);
  if (*exporter) return kvault::cli::RunExport(xf);
  if (*importer) return kvault::cli::RunImport(imf);
  if (*gen) return kvault::cli::RunGen(gf);
  if (*import_geak) return kvault::cli::RunImportGeak(gk);
  if (*cache) return kvault::cli::RunCache(*cache, cachef);
  if (*corpus) return kvault::cli::RunCorpus(*corpus, corpusf);
  if (*serve) return kvault::cli::RunServe(svf);
  return kvault::cli::kExitMisuse;
}
