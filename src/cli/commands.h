#pragma once
// The kvault subcommands (docs/cli.md). Each returns the process exit code:
// 0 the engine did its job (whatever the kernels' outcomes), 2 misuse,
// 3 infrastructure failure.
#include <optional>
#include <string>

#include "engine/options.h"

namespace kvault::cli {

constexpr int kExitOk = 0;
constexpr int kExitMisuse = 2;
constexpr int kExitInfra = 3;

struct CommonFlags {
  std::string backend = "auto";  // auto|cpu|cuda|hip
  std::string arch;
  std::string reward = "paper";
  bool json = false;
  bool no_timing = false;
  int run_timeout_s = 0;      // 0: the default (docs/cli.md)
  int compile_timeout_s = 0;
  int load_timeout_s = 0;
};

// Resolves flags and environment into engine options; prints the reason and returns
// nullopt on misuse or when auto-detection fails.
std::optional<EngineOptions> MakeOptions(const CommonFlags& flags, bool compile_only);

int RunDoctor(bool json);

struct VerifyFlags {
  CommonFlags common;
  std::string task, candidate;
  bool compile_only = false;
  std::optional<std::string> db;
  std::string run;
};
int RunVerify(const VerifyFlags& flags);

struct EvalFlags {
  CommonFlags common;
  std::string suite, candidates;
  int jobs = 1;
  std::string run = "default";
  std::optional<std::string> db;
  bool force = false;
};
int RunEval(const EvalFlags& flags);

}  // namespace kvault::cli
