#include "util/json_parse.h"

#include <algorithm>
#include <string>

namespace kvault {

size_t JsonNestingDepth(std::string_view text) {
  size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

Result<Json> ParseJson(std::string_view text, size_t max_depth) {
  if (JsonNestingDepth(text) > max_depth) {
    return Error{"JSON nested deeper than " + std::to_string(max_depth) + " levels"};
  }
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    // nlohmann prefixes "[json.exception.parse_error.101] "; keep the readable part.
    std::string what = e.what();
    if (size_t close = what.find("] "); what.starts_with("[json.exception") && close != std::string::npos) {
      what.erase(0, close + 2);
    }
    return Error{what};
  }
}

}  // namespace kvault
