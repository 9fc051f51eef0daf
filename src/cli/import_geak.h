#pragma once
// `kvault import-geak` (docs/geak-formats.md, docs/cli.md).
#include <CLI/CLI.hpp>
#include <string>

namespace kvault::cli {

struct ImportGeakFlags {
  std::string format, tasks, candidates, out;
  bool json = false;
};
CLI::App* AddImportGeakCommand(CLI::App& app, ImportGeakFlags& f);
int RunImportGeak(const ImportGeakFlags& f);

}  // namespace kvault::cli
