// kvault corpus import | verify | export | stats (docs/corpus.md); the curation
// subcommands (dedup, decontaminate, qa) are cli/corpus_curate.cc's.
#include "cli/corpus_cmd.h"

#include <unistd.h>

#include <fstream>
#include <iostream>
#include <thread>

#include "cli/interrupt.h"
#include "cli/lanes.h"
#include "cli/report.h"
#include "corpus/export.h"
#include "corpus/import.h"
#include "corpus/reverify.h"
#include "corpus/stats.h"
#include "engine/worker_sandbox.h"
#include "kvault/build_config.h"
#include "util/env.h"
#include "util/env_vars.h"
#include "util/files.h"
#include "util/strings.h"

namespace kvault::cli {
namespace {

using corpus::CorpusStore;

void AddVault(CLI::App* cmd, CorpusFlags& f) {
  cmd->add_option("--vault", f.vault, "the vault file (Default: ./vault.db)");
}

// The record filters; `duplicates`: also --include-duplicates (duplicates are left out
// without it).
void AddFilters(CLI::App* cmd, CorpusFlags& f, bool duplicates = true) {
  cmd->add_option("--status", f.status, "records with a result of this status, e.g. passed");
  cmd->add_option("--hardware", f.hardware, "records with a result on this hardware (its name)");
  cmd->add_option("--min-speedup", f.min_speedup, "records with a result at least this fast");
  cmd->add_option("--language", f.language, "hip | cuda | cpp | triton | python | ...");
  cmd->add_option("--kind", f.kind, "kernel | qa")->check(CLI::IsMember({"kernel", "qa"}));
  cmd->add_flag("--decontaminated-only", f.decontaminated_only, "leave out records marked contaminated");
  cmd->add_flag("--claims", f.claims, "count imports' verdicts (claims) as results, not only this vault's verification");
  if (duplicates) cmd->add_flag("--include-duplicates", f.include_duplicates, "keep records marked duplicates");
}

corpus::RecordFilter FilterOf(const CorpusFlags& f) {
  corpus::RecordFilter r;
  r.status = f.status;
  r.hardware = f.hardware;
  r.min_speedup = f.min_speedup;
  r.language = f.language;
  r.kind = f.kind;
  r.decontaminated_only = f.decontaminated_only;
  r.include_duplicates = f.include_duplicates;
  r.count_claims = f.claims;
  r.licensed_only = f.licensed_only;
  return r;
}

std::optional<CorpusStore> OpenVault(const CorpusFlags& f, const char* command, bool must_exist) {
  if (must_exist && !FileExists(f.vault)) {
    std::cerr << "kvault corpus " << command << ": no vault at " << f.vault << " (import first)\n";
    return std::nullopt;
  }
  auto vault = CorpusStore::Open(f.vault);
  if (!vault) {
    std::cerr << "kvault corpus " << command << ": " << vault.error() << "\n";
    return std::nullopt;
  }
  return std::move(*vault);
}

int RunImport(const CorpusFlags& f) {
  corpus::ImportOptions o;
  o.format = *corpus::ImportFormatFromString(f.from);  // checked by the parser
  o.suite = f.suite;
  o.geak = *GeakFormatFromString(f.geak_format);
  o.source = f.source;
  o.license = f.license;
  o.python = corpus::PythonFromEnvironment();
  auto vault = OpenVault(f, "import", false);
  if (!vault) return kExitInfra;
  auto report = corpus::ImportPaths(*vault, o, f.paths);
  if (!report) {
    std::cerr << "kvault corpus import: " << report.error() << "\n";
    return kExitMisuse;
  }
  for (const auto& p : report->malformed)
    std::cerr << "kvault corpus import: malformed " << p.file << (p.line ? ":" + std::to_string(p.line) : "")
              << ": " << p.why << "\n";
  for (const auto& path : report->empty_paths)
    std::cerr << "kvault corpus import: nothing read from " << path << " as --from " << f.from
              << " (empty, or another format)\n";
  if (f.json) {
    std::cout << report->ToJson().dump() << std::endl;
  } else {
    for (const auto& p : report->skipped)
      std::cerr << "kvault corpus import: skipped " << p.file << (p.line ? ":" + std::to_string(p.line) : "")
                << ": " << p.why << "\n";
    std::cout << "imported " << report->imported << ", skipped " << report->skipped.size() << ", malformed "
              << report->malformed.size() << " into " << f.vault << "\n";
  }
  // Nothing read from any path: the wrong --from or the wrong file, never a quiet success;
  // nor rows read that were all malformed (a truncated file, columns of the wrong type).
  if (report->imported == 0 && !report->malformed.empty()) {
    std::cerr << "kvault corpus import: nothing imported: the rows read were malformed or held no kernel\n";
    return kExitMisuse;
  }
  return report->rows() == 0 ? kExitMisuse : kExitOk;
}

int RunExportCmd(const CorpusFlags& f) {
  corpus::ExportOptions o;
  o.format = *corpus::ExportFormatFromString(f.format);
  o.filter = FilterOf(f);
  o.output = f.output;
  o.python = corpus::PythonFromEnvironment();
  o.prompts.root = !f.prompts.empty() ? f.prompts : SourceRoot() + "/prompts";
  o.prompts.version = f.prompt_version;
  o.prompts.hardware = f.prompt_hardware;
  o.system_prompt = !f.no_system_prompt;
  o.chat = f.chat;
  if (o.chat && o.format != corpus::ExportFormat::kDpo) {
    std::cerr << "kvault corpus export: --chat is for --format dpo (sft and verl rows are chat turns already)\n";
    return kExitMisuse;
  }
  if (f.any_status && !corpus::SftFormat(o.format)) {
    std::cerr << "kvault corpus export: --any-status is for --format sft, alpaca and sharegpt (the others keep "
                 "every status)\n";
    return kExitMisuse;
  }
  // Training data leaves the machine: published unless asked; records stay the vault's own.
  o.publish = f.publish || (o.format != corpus::ExportFormat::kRecords && !f.no_publish);
  o.split = f.split == "train" ? corpus::ExportSplit::kTrain
            : f.split == "test" ? corpus::ExportSplit::kTest
                                : corpus::ExportSplit::kAll;
  o.test_share = f.test_share;
  o.any_status = f.any_status;
  if (o.format != corpus::ExportFormat::kRecords)
    if (Status s = corpus::CheckPromptSettings(o.prompts); !s) {
      std::cerr << "kvault corpus export: " << s.error() << "\n";
      return kExitMisuse;
    }
  if (Status s = corpus::CheckExportOutput(o); !s) {  // a bad -o, said before any work
    std::cerr << "kvault corpus export: " << s.error() << "\n";
    return kExitMisuse;
  }
  auto vault = OpenVault(f, "export", true);
  if (!vault) return kExitMisuse;
  auto summary = corpus::ExportRecords(*vault, o);
  if (!summary) {
    std::cerr << "kvault corpus export: " << summary.error() << "\n";
    return kExitInfra;
  }
  for (const std::string& why : summary->skipped_why) std::cerr << "kvault corpus export: left out " << why << "\n";
  if (o.publish && summary->unlicensed > 0)
    std::cerr << "kvault corpus export: " << summary->unlicensed
              << " row(s) come from sources that state no licence: check their terms before publishing, or "
                 "leave them out with --licensed-only\n";
  if (f.json)
    std::cout << summary->ToJson().dump() << std::endl;
  else
    std::cout << "exported " << summary->rows << " row(s) from " << summary->records << " record(s) ("
              << summary->skipped << " the format cannot hold, " << summary->other_split
              << " whose task family is in the other split, " << summary->not_passed
              << " kernels that did not pass) to " << f.output << "\n";
  return kExitOk;
}

int RunStats(const CorpusFlags& f) {
  auto vault = OpenVault(f, "stats", true);
  if (!vault) return kExitMisuse;
  corpus::RecordFilter filter = FilterOf(f);
  filter.include_duplicates = true;  // counted, as `duplicates`
  auto stats = corpus::ComputeStats(*vault, filter);
  if (!stats) {
    std::cerr << "kvault corpus stats: " << stats.error() << "\n";
    return kExitInfra;
  }
  if (!f.html.empty()) {
    if (Status s = WriteFileAtomic(f.html, corpus::StatsHtml(*stats, f.vault)); !s) {
      std::cerr << "kvault corpus stats: " << s.error() << "\n";
      return kExitInfra;
    }
  }
  if (f.json)
    std::cout << corpus::StatsToJson(*stats).dump() << std::endl;
  else
    std::cout << corpus::StatsText(*stats);
  return kExitOk;
}

int RunVerifyCmd(const CorpusFlags& f) {
  InterruptGuard interrupt;  // before any thread or child starts
  auto vault = OpenVault(f, "verify", true);
  if (!vault) return kExitMisuse;
  int options_exit = kExitOk;
  // As eval: an explicit GPU backend is checked by the lanes' own workers.
  auto options = MakeOptions(f.common, false, &options_exit, BackendCheck::kByWorkers);
  if (!options) return options_exit;
  auto jobs = ParseJobs(f.jobs, options->backend, std::thread::hardware_concurrency());
  if (!jobs) {
    std::cerr << "kvault corpus verify: " << jobs.error() << "\n";
    return kExitMisuse;
  }
  corpus::ReverifySettings settings;
  settings.filter = FilterOf(f);
  settings.jobs = *jobs;
  settings.compile_jobs = f.compile_jobs;
  settings.force = f.force;
  settings.hardware = f.verify_hardware;
  settings.scratch_db = f.scratch_db;
  settings.stop = interrupt.flag();
  HideStoreFromWorkers(*options, f.vault);
  ProgressPrinter progress(std::cerr, isatty(STDERR_FILENO));
  auto summary = corpus::Reverify(*vault, *options, settings, [&](const EvalProgress& p) { progress.Update(p); });
  progress.Finish();
  if (interrupt.stopped()) {
    std::cerr << "kvault corpus verify: interrupted; results so far are in " << f.vault
              << "; run the same command again to continue\n";
    return kExitInterrupted;
  }
  // Nothing verified and something not recorded: a backend this PyTorch cannot run at all
  // is misuse, as MakeOptions would have said before starting.
  if ((!summary || (summary->verified == 0 && summary->not_recorded > 0)) && ReportBackendUnusable(*options))
    return kExitMisuse;
  if (!summary) {
    std::cerr << "kvault corpus verify: " << summary.error() << "\n";
    return kExitInfra;
  }
  if (f.json)
    std::cout << summary->ToJson().dump() << std::endl;
  else
    std::cout << "verified " << summary->verified << " of " << summary->selected << " record(s) on "
              << summary->hardware << " (" << summary->toolchain << "); " << summary->already
              << " had a result here, " << summary->unsupported << " cannot run here, "
              << summary->not_recorded << " not recorded (task or infrastructure errors)\n";
  return summary->not_recorded > 0 ? kExitInfra : kExitOk;
}

}  // namespace

CLI::App* AddCorpusCommand(CLI::App& app, CorpusFlags& f) {
  auto* corpus = app.add_subcommand("corpus", "the vault: verified kernels with provenance, exported for training");
  corpus->require_subcommand(1);

  f.import_cmd = corpus->add_subcommand("import", "add kernels from eval/gen stores, GEAK, AMD's formats, KernelBench folders");
  f.import_cmd->add_option("--from", f.from, corpus::ImportFormatNames())
      ->required()->check(CLI::IsMember(Split(corpus::ImportFormatNames(), '|')));
  f.import_cmd->add_option("paths", f.paths, "files or folders to import")->required();
  f.import_cmd->add_option("--suite", f.suite, "task folder: references for --from store and kernelbench");
  f.import_cmd->add_option("--geak-format", f.geak_format, "tritonbench-g | rocmbench (Default: tritonbench-g)")
      ->check(CLI::IsMember({"tritonbench-g", "rocmbench"}));
  f.import_cmd->add_option("--source", f.source, "provenance source of every record (dataset name or URL)");
  f.import_cmd->add_option("--license", f.license, "licence of every record");
  f.import_cmd->add_flag("--json", f.json, "machine-readable summary");
  AddVault(f.import_cmd, f);

  f.export_cmd = corpus->add_subcommand("export", "write records as training data");
  f.export_cmd->add_option("--format", f.format, corpus::ExportFormatNames())
      ->required()->check(CLI::IsMember(Split(corpus::ExportFormatNames(), '|')));
  f.export_cmd->add_option("-o,--output", f.output, "file to write; a folder for hf")->required();
  f.export_cmd->add_flag("--json", f.json, "machine-readable summary");
  f.export_cmd->add_option("--prompts", f.prompts, "prompts folder of kvault gen (Default: <source root>/prompts)");
  f.export_cmd->add_option("--prompt-version", f.prompt_version, "prompt version folder (Default: v1)");
  f.export_cmd->add_option("--prompt-hardware", f.prompt_hardware,
                           "target description in prompts/hardware (Default: by language: hip mi300x, cpp cpu, else h200)");
  f.export_cmd->add_flag("--no-system-prompt", f.no_system_prompt, "rows without gen's system message");
  f.export_cmd->add_flag("--chat", f.chat,
                         "dpo: prompt as chat messages (system, user), chosen and rejected as assistant turns");
  auto* publish = f.export_cmd->add_flag("--publish", f.publish,
                                         "leave out paths, command lines and host names (Default: on, but for records)");
  f.export_cmd->add_flag("--no-publish", f.no_publish, "keep results' environments and file paths")->excludes(publish);
  f.export_cmd->add_option("--split", f.split, "all | train | test: the task families of one side of the split")
      ->check(CLI::IsMember({"all", "train", "test"}));
  f.export_cmd->add_option("--test-share", f.test_share, "share of task families in the test split (Default: 0.1)")
      ->check(CLI::Range(0.0, 1.0));
  f.export_cmd->add_flag("--any-status", f.any_status,
                         "sft, alpaca, sharegpt: also kernels without a passed result (Default: passed kernels only)");
  f.export_cmd->add_flag("--licensed-only", f.licensed_only, "leave out records whose source states no licence");
  AddFilters(f.export_cmd, f);
  AddVault(f.export_cmd, f);

  f.stats_cmd = corpus->add_subcommand("stats", "counts by source, language, status, operation; speedups");
  f.stats_cmd->add_flag("--json", f.json, "machine-readable output");
  f.stats_cmd->add_option("--html", f.html, "also write an HTML page");
  AddFilters(f.stats_cmd, f, /*duplicates=*/false);
  AddVault(f.stats_cmd, f);

  f.verify_cmd = corpus->add_subcommand("verify", "verify the vault's kernels again on this machine");
  f.verify_cmd->add_option("--jobs", f.jobs, "parallel lanes: N or auto (Default: auto: 6 on a GPU, 1 per 4 CPU cores on the CPU)")
      ->check(CLI::Validator(CheckJobsText, "N|auto"));
  f.verify_cmd->add_option("--compile-jobs", f.compile_jobs, "threads building candidates ahead (Default: CPU cores)")
      ->check(CLI::Range(0, 1024));
  f.verify_cmd->add_flag("--force", f.force, "verify again records with a result of this hardware and toolchain");
  f.verify_cmd->add_option("--as-hardware", f.verify_hardware, "the hardware name results carry (Default: the device's)");
  f.verify_cmd->add_option("--db", f.scratch_db, "the attempt store of the runs (Default: <vault>.verify.db)");
  f.verify_cmd->add_flag("--json", f.json, "machine-readable summary");
  AddFilters(f.verify_cmd, f);
  AddVault(f.verify_cmd, f);

  AddCorpusCurateCommands(corpus, f.curate);
  return corpus;
}

int RunCorpus(const CLI::App& /*corpus*/, const CorpusFlags& f) {
  if (*f.import_cmd) return RunImport(f);
  if (*f.export_cmd) return RunExportCmd(f);
  if (*f.stats_cmd) return RunStats(f);
  if (*f.verify_cmd) return RunVerifyCmd(f);
  if (std::optional<int> code = RunCorpusCurate(f.curate)) return *code;
  return kExitMisuse;
}

}  // namespace kvault::cli
