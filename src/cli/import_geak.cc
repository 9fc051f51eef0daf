// `kvault import-geak`: GEAK-eval files (TritonBench-G, ROCmBench) into a suite and
// Triton candidates that `kvault eval` verifies (docs/geak-formats.md).
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/commands.h"
#include "cli/import_geak.h"
#include "geak/geak_import.h"

namespace kvault::cli {

CLI::App* AddImportGeakCommand(CLI::App& app, ImportGeakFlags& f) {
  auto* cmd = app.add_subcommand(
      "import-geak", "turn TritonBench-G / ROCmBench files into a suite and Triton candidates");
  cmd->add_option("--format", f.format, "tritonbench-g or rocmbench")
      ->required()
      ->check(CLI::IsMember({"tritonbench-g", "rocmbench"}));
  cmd->add_option("--tasks", f.tasks, "folder of task files (implementation, 146 '#', tests)")->required();
  cmd->add_option("--candidates", f.candidates,
                  "folder of candidate files, matched to tasks by stem (Default: none)");
  cmd->add_option("-o,--output", f.out, "output folder: writes suite/ and candidates/")->required();
  cmd->add_flag("--json", f.json, "print what was imported as JSON");
  return cmd;
}

int RunImportGeak(const ImportGeakFlags& f) {
  auto format = GeakFormatFromString(f.format);
  if (!format) {
    std::cerr << "kvault import-geak: unknown format " << f.format << "\n";
    return kExitMisuse;
  }
  auto summary = ImportGeak(*format, f.tasks, f.candidates, f.out);
  if (!summary) {
    std::cerr << "kvault import-geak: " << summary.error() << "\n";
    return kExitMisuse;
  }
  for (const std::string& p : summary->problems) std::cerr << "not imported: " << p << "\n";
  if (f.json) {
    Json j{{"output", f.out},
           {"tasks", summary->tasks_written},
           {"candidates", summary->candidates_written},
           {"not_imported", summary->problems}};
    std::cout << j.dump() << std::endl;
    return summary->problems.empty() ? kExitOk : kExitMisuse;
  }
  std::cout << "imported " << summary->tasks_written.size() << " task(s) into " << f.out
            << "/suite";
  if (!f.candidates.empty())
    std::cout << " and " << summary->candidates_written.size() << " candidate(s) into " << f.out
              << "/candidates";
  std::cout << "\n";
  // Files that could not be imported are the caller's to fix: say so in the status.
  return summary->problems.empty() ? kExitOk : kExitMisuse;
}

}  // namespace kvault::cli
