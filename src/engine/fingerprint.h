#pragma once
// The environment fingerprint stored with every attempt: what produced a number.
#include "util/json.h"

namespace kvault {

// Combines the worker's hello (device, driver, torch, python), the toolchains found
// on this machine, the OS and the engine version into one JSON object.
Json EnvironmentFingerprint(const Json& hello);

}  // namespace kvault
