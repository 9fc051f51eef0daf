// The misuse message for a flag the command does not have: CLI11 reports it as a
// missing required flag (`--candidates is required` for `--candiates`) or as "not
// expected" arguments, naming neither the mistake nor the fix.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace kvault::cli {

// "" when every `--flag` of argv is a flag of the (sub)command argv names; else
// "unknown flag --candiates of kvault eval (did you mean --candidates?)" for the
// first that is not, the suggestion only when a flag of that command is close.
// argv as main() gets it; `--flag=value` is read as `--flag`.
std::string UnknownFlagHint(CLI::App& app, int argc, const char* const* argv);

}  // namespace kvault::cli
