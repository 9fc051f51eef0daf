#pragma once
// Environment lookups. Thread-safe as long as nothing calls setenv() concurrently.
#include <optional>
#include <string>

namespace kvault {

// The variable's value, or nullopt when it is unset. An empty value is returned as "".
std::optional<std::string> GetEnv(const std::string& name);

// Where caches live by default: $KVAULT_CACHE_DIR, else $XDG_CACHE_HOME/kvault, else
// $HOME/.cache/kvault, else /tmp/kvault-cache. Empty variables count as unset. The
// directory is not created.
std::string DefaultCacheDir();

}  // namespace kvault
