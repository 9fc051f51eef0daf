#pragma once
// Timestamps of stored rows. Internal to the store component.
#include <string>

namespace kvault {

// Now as ISO-8601 UTC with milliseconds: 2025-01-31T12:00:00.000Z.
std::string NowIso8601Utc();

}  // namespace kvault
