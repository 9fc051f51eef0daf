#pragma once
#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace kvault::cli {

// Adds the `gen` subcommand and its own flags (not CommonFlags) to `app`.
CLI::App* AddGenCommand(CLI::App& app, GenFlags& flags);

}  // namespace kvault::cli
