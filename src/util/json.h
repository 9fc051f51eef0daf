#pragma once
// The project's JSON type (nlohmann::json, from Debian's nlohmann-json3-dev).
#include <nlohmann/json.hpp>

namespace kvault {
using Json = nlohmann::json;
}  // namespace kvault
