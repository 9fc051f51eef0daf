#include <cstdlib>

#include "store/store.h"

namespace kvault {

std::string ResolveDbPath(const std::optional<std::string>& flag) {
  if (flag && !flag->empty()) return *flag;
  if (const char* env = std::getenv("KVAULT_DB"); env != nullptr && *env != '\0') return env;
  return "./kvault.db";
}

}  // namespace kvault
