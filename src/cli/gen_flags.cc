// The flags of `kvault gen` (docs/cli.md); main.cc adds the shared ones.
#include "cli/gen_flags.h"

#include "cli/lanes.h"

namespace kvault::cli {

CLI::App* AddGenCommand(CLI::App& app, GenFlags& f) {
  auto* gen = app.add_subcommand("gen", "generate kernels for a suite with an LLM and verify them");
  // Empty: by mode (GenPolicy in gen.cc); main.cc's --policy help says so.
  f.common.policy.clear();
  gen->add_option("--suite", f.suite, "folder of task files")->required();
  // --endpoint, --model and --lang are required but with --list (RunGen says so).
  gen->add_option("--endpoint", f.endpoint, "OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 (required)");
  gen->add_option("--model", f.model, "model name sent to the server (required)");
  gen->add_option("--lang", f.lang, "candidate language: cpp | cuda | hip | triton (| python for modu2func) (required)");
  gen->add_option("--mode", f.mode, "torch2kernel | kernel2kernel | modu2func (Default: torch2kernel)")
      ->check(CLI::IsMember({"torch2kernel", "kernel2kernel", "modu2func"}));
  gen->add_option("--format", f.format, "candidate format: extension | native (Default: extension; triton for --lang triton; functional for modu2func)");
  gen->add_option("--hardware", f.hardware, "target description in prompts/hardware (Default: by backend)");
  gen->add_option("--preset", f.preset, "paper: 1 offspring, 3 iterations")->check(CLI::IsMember({"paper"}));
  gen->add_option("--offsprings", f.offsprings, "candidates per iteration (Default: 1)")->check(CLI::Range(1, 64));
  gen->add_option("--iterations", f.iterations, "iterations per task (Default: 3)")->check(CLI::Range(1, 100));
  gen->add_option("--ancestors", f.ancestors, "best correct candidates shown to the generator (Default: 3)")
      ->check(CLI::Range(0, 64));
  gen->add_option("--perf-debug", f.perf_debug,
                  "iterations still run once a candidate is correct (Default: no limit)")
      ->check(CLI::Range(0, 100));
  gen->add_option("--run", f.run, "run name in the store (Default: default)");
  gen->add_option("--db", f.db, "store path (Default: $KVAULT_DB, else ./kvault.db)");
  gen->add_flag("--resume", f.resume, "continue an interrupted run without repeating its work");
  gen->add_option("--api-key-env", f.api_key_env, "environment variable holding the API key");
  gen->add_option("--concurrency", f.concurrency, "LLM calls in flight (Default: 4)")->check(CLI::Range(1, 256));
  gen->add_option("--jobs", f.jobs, "verification lanes: N or auto (Default: auto: 6 on a GPU, 1 per 4 CPU cores on the CPU)")
      ->check(CLI::Validator(CheckJobsText, "N|auto"));
  gen->add_option("--tasks", f.tasks, "only the suite's tasks these comma-separated wildcards name, e.g. 'level1/*,*relu*'")
      ->delimiter(',');
  gen->add_option("--max-tasks", f.max_tasks, "only the first N tasks of the suite (Default: all)")
      ->check(CLI::Range(1, 1000000));
  gen->add_option("--timeout", f.timeout_s, "seconds per LLM HTTP call (Default: 600)")
      ->check(CLI::Range(0.1, 86400.0));
  gen->add_option("--retries", f.retries, "further HTTP calls after a failed one (Default: 2)")
      ->check(CLI::Range(0, 20));
  gen->add_option("--temperature", f.temperature, "sampling temperature (Default: the server's)");
  gen->add_option("--max-tokens", f.max_tokens, "completion limit (Default: the server's)")
      ->check(CLI::Range(1, 10000000));
  gen->add_option("--prompts", f.prompts, "prompts folder (Default: <source root>/prompts)");
  gen->add_option("--prompt-version", f.prompt_version, "prompt version folder (Default: v1)");
  gen->add_option("--baseline", f.baseline, "kernel2kernel: folder of baseline kernels named <task>.<ext>");
  gen->add_flag("--list", f.list,
                "print the tasks gen would take (--tasks, --max-tasks; with --json: one document), call nothing");
  return gen;
}

}  // namespace kvault::cli
