#pragma once
// The environment fingerprint stored with every attempt: what produced a number.
#include <future>

#include "util/json.h"
#include "util/sha256.h"

namespace kvault {

// Combines the worker's hello (device, driver, torch, python), the toolchains found
// on this machine, the OS and the engine version into one JSON object.
Json EnvironmentFingerprint(const Json& hello);

// Starts finding the toolchains EnvironmentFingerprint names (each compiler's
// --version, and HIP's offload targets: seconds where hipcc is installed) on another
// thread, so that a lane's start, which asks for the fingerprint right after its
// worker's hello, does not wait for them. Keep the future until the fingerprints are
// made (its destructor waits for the discovery). Once per process; later calls return
// a future that is ready.
std::future<void> DiscoverToolchainsAhead();

// Adds to `h` what of the worker's hello decides what it computes: the device's name
// and arch, PyTorch, Python and the worker's own source. The one list the keys of
// work a worker did share (reference outputs, noted load_inline calls).
void AddWorkerSoftware(KeyHasher& h, const Json& hello);

}  // namespace kvault
