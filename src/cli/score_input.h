#pragma once
// What score, compare and report read: the runs' records from the store and the task
// list (a suite folder, else the tasks the runs attempted). Prints the reason and
// returns the exit code on failure: 2 for a missing store file, an unknown run or a
// bad suite / categories.json, 3 when the store cannot be opened or read.
#include <optional>
#include <string>
#include <vector>

#include "score/samples.h"
#include "store/store.h"

namespace kvault::cli {

struct ScoreInput {
  std::vector<std::string> runs;
  std::vector<std::vector<AttemptRecord>> records;  // one per run
  std::vector<std::string> tasks;                    // suite order, or sorted names
  score::CategoryMap categories;
};

// On success returns kExitOk and fills `out`. `suite` empty: tasks from the records.
int LoadScoreInput(const std::string& command, const std::optional<std::string>& db,
                   const std::vector<std::string>& runs, const std::string& suite, ScoreInput& out);

// The model of a `kvault gen` run, from its tasks' settings in the store at `db`;
// "" for a run gen did not make (or a store without generation records).
std::string GenRunModel(const std::string& db, const std::string& run);

}  // namespace kvault::cli
