#pragma once
// `kvault corpus`: the vault of verified kernels (docs/corpus.md): import, verify,
// export, stats; dedup, decontaminate and qa come from cli/corpus_curate.h.
#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/corpus_curate.h"

namespace kvault::cli {

struct CorpusFlags {
  std::string vault = "vault.db";  // --vault, every subcommand
  bool json = false;
  // import
  std::string from;
  std::vector<std::string> paths;
  std::string suite, geak_format = "tritonbench-g", source, license;
  // export and the filters of export, stats and verify
  std::string format, output, status, hardware, language, kind;
  std::optional<double> min_speedup;
  bool decontaminated_only = false, include_duplicates = false;
  bool claims = false;  // --claims: imports' verdicts count as results
  // export: prompts (gen's templates), split, publish
  std::string prompts, prompt_version = "v1", prompt_hardware, split = "all";
  double test_share = 0.1;
  bool no_system_prompt = false;
  bool chat = false;
  bool any_status = false;     // sft formats: also kernels that did not pass
  bool licensed_only = false;  // leave out records whose source states no licence
  bool publish = false, no_publish = false;  // Default: publish every format but records
  // stats
  std::string html;
  // verify
  CommonFlags common;  // main.cc adds the engine flags (AddCommon)
  std::string jobs = "auto";  // lanes: a number, or auto (cli/lanes.h)
  int compile_jobs = -1;
  bool force = false;
  std::string verify_hardware, scratch_db;
  // the parsed subcommands
  CLI::App *import_cmd = nullptr, *export_cmd = nullptr, *stats_cmd = nullptr, *verify_cmd = nullptr;
  CorpusCurateFlags curate;
};

// Adds `corpus` and its subcommands to `app`.
CLI::App* AddCorpusCommand(CLI::App& app, CorpusFlags& flags);

// Runs whichever subcommand of `corpus` was parsed.
int RunCorpus(const CLI::App& corpus, const CorpusFlags& flags);

}  // namespace kvault::cli
