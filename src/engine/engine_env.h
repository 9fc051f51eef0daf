#pragma once
// Filling EngineOptions from the environment: KVAULT_PYTHON, KVAULT_CACHE_DIR,
// KVAULT_SOURCE_ROOT (where python/ and include_hip/ are; default: the source tree
// this binary was built from).
#include "engine/options.h"

namespace kvault {

// Applies the environment to `options` (fields the environment does not name keep
// their values).
void ApplyEnvironment(EngineOptions& options);

}  // namespace kvault
