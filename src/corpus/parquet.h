#pragma once
// Parquet files of the corpus, through python/kvault_export/rows.py (pyarrow in
// $KVAULT_PYTHON): the engine reads and writes JSON Lines, that module converts.
//
//   auto rows = ReadParquetRows(python, "rl.parquet");   // one Json per row, in order
//   JsonlToParquet(python, "rows.jsonl", "out.parquet"); // nested types inferred
#include <string>
#include <vector>

#include "util/json.h"
#include "util/result.h"

namespace kvault::corpus {

// Where the converter runs: the interpreter and the folder holding kvault_export.
struct PythonEnv {
  std::string python;       // $KVAULT_PYTHON or python3
  std::string python_path;  // <source root>/python
};

// From the environment (engine_env: KVAULT_PYTHON, KVAULT_SOURCE_ROOT).
PythonEnv PythonFromEnvironment();

// The rows of a Parquet file as JSON text lines (line N is row N). A row that is not
// valid JSON cannot occur (the converter writes it); an unreadable file, a file that
// is not Parquet or missing pyarrow is an Error naming the file.
Result<std::vector<std::string>> ReadParquetRows(const PythonEnv& env, const std::string& path);

// Writes the JSON objects of a JSON Lines file as one Parquet file; nested lists and
// objects become list and struct columns.
Status JsonlToParquet(const PythonEnv& env, const std::string& jsonl, const std::string& parquet);

}  // namespace kvault::corpus
