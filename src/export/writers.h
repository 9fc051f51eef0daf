#pragma once
// Writing rows of the row model (export/rows.h) as JSON Lines or CSV (docs/export.md).
// Parquet is written by the worker's Python with pyarrow (python/kvault_export), from
// the JSON Lines and ColumnsJson, so the row model stays in one place.
#include <ostream>
#include <vector>

#include "export/rows.h"

namespace kvault::exporting {

// One JSON object per line, keys in column order; kJson columns nested as JSON.
void WriteJsonl(std::ostream& out, const std::vector<Column>& columns, const std::vector<Json>& rows);

// RFC 4180: a header line of column names, then one line per row; every field that
// holds a comma, quote, CR or LF is quoted with its quotes doubled; null is empty,
// booleans are true/false, kJson columns are their compact JSON text.
void WriteCsv(std::ostream& out, const std::vector<Column>& columns, const std::vector<Json>& rows);

}  // namespace kvault::exporting
