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
  std::vector<std::vector<AttemptRecord>> records;  // one per run; serve's task names resolved
  std::string suite;                                 // the suite folder used; "" for none
  std::vector<std::string> tasks;                    // suite order, or sorted names
  score::CategoryMap categories;
};

// On success returns kExitOk and fills `out`. `suite` empty: the suite `kvault gen`
// recorded for the runs (all of them the same folder, still readable), else the tasks
// the records hold (said on stderr: unattempted tasks then count nowhere). Records
// named by kvault serve (`<label>-<hash>`) are renamed to their task
// (score::NameServeTasks).
int LoadScoreInput(const std::string& command, const std::optional<std::string>& db,
                   const std::vector<std::string>& runs, const std::string& suite, ScoreInput& out);

// A string setting `kvault gen` recorded for `run` in the store at `db` ("model",
// "suite", ...); "" for a run gen did not make, a store without generation records,
// or a setting it did not record.
std::string GenRunSetting(const std::string& db, const std::string& run, const std::string& key);

}  // namespace kvault::cli
