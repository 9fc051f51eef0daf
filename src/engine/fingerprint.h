#pragma once
// The environment fingerprint stored with every attempt: what produced a number.
#include "util/json.h"
#include "util/sha256.h"

namespace kvault {

// Combines the worker's hello (device, driver, torch, python), the toolchains found
// on this machine, the OS and the engine version into one JSON object.
Json EnvironmentFingerprint(const Json& hello);

// Adds to `h` what of the worker's hello decides what it computes: the device's name
// and arch, PyTorch, Python and the worker's own source. The one list the keys of
// work a worker did share (reference outputs, noted load_inline calls).
void AddWorkerSoftware(KeyHasher& h, const Json& hello);

}  // namespace kvault
