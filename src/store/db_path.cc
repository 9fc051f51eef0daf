#include <cstdlib>

#include "store/store.h"
#include "util/env_vars.h"

namespace kvault {

std::string ResolveDbPath(const std::optional<std::string>& flag) {
  if (flag && !flag->empty()) return *flag;
  if (auto env = KvaultEnv("KVAULT_DB"); env && !env->empty()) return *env;
  return "./kvault.db";
}

}  // namespace kvault
