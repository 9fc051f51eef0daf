#pragma once
// Filling EngineOptions from the environment: KVAULT_PYTHON, KVAULT_CACHE_DIR,
// KVAULT_SOURCE_ROOT (where python/ and include_hip/ are; default: the source tree
// this binary was built from), KVAULT_SANDBOX*, KVAULT_ZYGOTE and
// KVAULT_DEVICE_COMPARE_MIN_BYTES (docs/cli.md). A malformed value of the last two is
// kept in sandbox_error: every worker start then fails with it.
#include "engine/options.h"

namespace kvault {

// Applies the environment to `options` (fields the environment does not name keep
// their values).
void ApplyEnvironment(EngineOptions& options);

}  // namespace kvault
