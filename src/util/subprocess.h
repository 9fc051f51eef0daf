#pragma once
// RunCommand: run a program to completion (compilers, tool probes) with a timeout and
// a bounded capture of its output. Thread-safe: concurrent calls run independent
// children.
//
//   CommandSpec cmd;
//   cmd.argv = {"g++", "-c", "k.cc", "-o", "k.o"};
//   auto r = RunCommand(cmd, std::chrono::seconds(120));
//   if (!r) return Error{r.error()};                   // could not start at all
//   if (r->timed_out || r->exit_code != 0) report(r->output);
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "util/result.h"

namespace kvault {

struct CommandSpec {
  // argv[0] without a '/' is looked up in the PATH of the child's environment.
  std::vector<std::string> argv;
  // Set in the child's environment (overriding inherited values).
  std::vector<std::pair<std::string, std::string>> env_set;
  // Default: true. false: the child sees env_set only.
  bool inherit_env = true;
  // Default: empty, this process's working directory.
  std::string cwd;
};

struct CommandResult {
  int exit_code = -1;      // >= 0 when the program exited normally
  int term_signal = 0;     // > 0 when a signal ended it (SIGKILL after a timeout)
  bool timed_out = false;  // killed because it ran past the timeout
  // stdout and stderr interleaved as written (one pipe). Bounded: past max_output
  // bytes, the head and tail are kept around a "[... N bytes omitted ...]" marker.
  std::string output;
  double seconds = 0;  // wall time from start to reaping
};

// Runs the command with stdin on /dev/null, in its own process group. On timeout the
// whole group is SIGKILLed; when the program exits, whatever it left running in its
// group is SIGKILLed too. The child is always reaped before returning. Returns an
// Error only when the program could not be started (not found, not executable, bad
// cwd); the message names the program. Everything else, including a crash or a
// timeout, is a CommandResult.
Result<CommandResult> RunCommand(const CommandSpec& spec, std::chrono::milliseconds timeout,
                                 size_t max_output = 1 << 20);

// "exited with status 3", "killed by signal 11 (SIGSEGV)".
std::string DescribeTermination(int exit_code, int term_signal);

}  // namespace kvault
