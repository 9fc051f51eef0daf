#pragma once
// The curation subcommands of `kvault corpus` (docs/corpus.md): `dedup`,
// `decontaminate` and `qa`. The dispatcher (cli/corpus_cmd.cc) calls them so:
//
//   CorpusCurateFlags curate;
//   AddCorpusCurateCommands(corpus, curate);      // corpus: the `corpus` CLI::App*
//   ... app.parse(...) ...
//   if (std::optional<int> code = RunCorpusCurate(curate)) return *code;
//   // nullopt: none of these subcommands was given
//
// Exit codes as every command's (cli/commands.h): 0 done, 2 misuse (bad flags, a suite
// or source tree that cannot be read), 3 infrastructure (the vault cannot be written,
// the LLM server failed for good: what was stored stays, the same command continues).
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace kvault::cli {

struct CorpusCurateFlags {
  std::string vault = "vault.db";
  bool json = false;
  int threads = 0;
  // dedup
  double threshold = 0.8;
  int num_perm = 128, shingle = 5;
  bool exact_only = false, dry_run = false;
  std::string dump_tokens;  // normalised tokens, one record a line (benchmarks)
  std::string marks_out;    // the duplicate marks as JSON Lines
  // decontaminate
  std::string suite, suite_name;
  int ngram = 13;
  double min_overlap = 0.5, max_task_share = 0.05;
  bool no_signature = false;
  // qa
  std::string source_tree, endpoint, model, api_key_env, license, source, progress;
  int max_pairs = 4, max_lines = 80, retries = 2;
  double timeout_s = 600;
  std::optional<double> temperature;
  std::optional<int> max_tokens;
  // the parsed subcommands
  CLI::App* dedup_cmd = nullptr;
  CLI::App* decontaminate_cmd = nullptr;
  CLI::App* qa_cmd = nullptr;
};

void AddCorpusCurateCommands(CLI::App* corpus, CorpusCurateFlags& flags);
std::optional<int> RunCorpusCurate(const CorpusCurateFlags& flags);

}  // namespace kvault::cli
