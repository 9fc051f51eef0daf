#pragma once
// Parsing JSON that comes from outside the engine (worker responses, tensor-file
// headers) without exceptions and without unbounded recursion.
#include <string_view>

#include "util/json.h"
#include "util/result.h"

namespace kvault {

// Deepest nesting of arrays/objects in `text` (strings are skipped correctly; the
// text need not be valid JSON). "1" -> 0, "[[1]]" -> 2.
size_t JsonNestingDepth(std::string_view text);

// Parses `text` as one JSON value. Error (never an exception) when it is not valid
// JSON, or nests deeper than `max_depth`, checked before the parser recurses into it.
// Messages are one line, e.g. "syntax error at byte 5: ...".
Result<Json> ParseJson(std::string_view text, size_t max_depth = 128);

}  // namespace kvault
