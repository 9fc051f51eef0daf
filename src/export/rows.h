#pragma once
// The row model of exported attempts (`kvault export`, docs/export.md): one flat row
// per attempt, the same columns in every format. The one place that says what an
// exported attempt holds; training exports build on it.
//
//   RunContext ctx{.model = "qwen3-8b"};
//   for (const AttemptRecord& r : records) rows.push_back(AttemptRow(r, ctx));
//   WriteCsv(out, AttemptColumns(), rows);
#include <string>
#include <vector>

#include "store/store.h"
#include "util/json.h"
#include "util/result.h"

namespace kvault::exporting {

enum class ColumnType { kString, kInt, kDouble, kBool, kJson };

struct Column {
  std::string name;
  ColumnType type;
  bool nullable = false;
};

// What a run's records do not carry themselves.
struct RunContext {
  std::string model;  // the LLM of a `kvault gen` run (gen_tasks settings); "" otherwise
};

// Every column, in order (docs/export.md).
const std::vector<Column>& AttemptColumns();

// One attempt as a JSON object with exactly AttemptColumns()' keys: strings, numbers,
// booleans, null for an absent nullable value; kJson columns hold JSON values.
Json AttemptRow(const AttemptRecord& record, const RunContext& context);

// The inverse of AttemptRow: a row of `kvault export --format jsonl` back into a
// record (`kvault import`). The derived columns (id, device, torch, model) are
// ignored, and Store::Put stamps created_at anew. Error naming the column for a missing
// key or a value of the wrong type.
Result<AttemptRecord> AttemptFromRow(const Json& row);

// The columns as JSON ([{"name", "type", "nullable"}]): what the Parquet writer is told.
Json ColumnsJson(const std::vector<Column>& columns);

}  // namespace kvault::exporting
