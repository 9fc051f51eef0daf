#pragma once
// The project's JSON type (nlohmann::json, from Debian's nlohmann-json3-dev).
#include <string>

#include <nlohmann/json.hpp>

namespace kvault {
using Json = nlohmann::json;

// Compact JSON text; invalid UTF-8 in strings is replaced, never thrown.
inline std::string DumpJson(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}
}  // namespace kvault
