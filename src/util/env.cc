#include "util/env.h"

#include <cstdlib>

#include "util/env_vars.h"

namespace kvault {
namespace {

std::optional<std::string> NonEmpty(const char* name) {
  auto v = GetEnv(name);
  if (v && v->empty()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<std::string> GetEnv(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

std::string DefaultCacheDir() {
  if (auto dir = KvaultEnv("KVAULT_CACHE_DIR"); dir && !dir->empty()) return *dir;
  if (auto xdg = NonEmpty("XDG_CACHE_HOME")) return *xdg + "/kvault";
  if (auto home = NonEmpty("HOME")) return *home + "/.cache/kvault";
  return "/tmp/kvault-cache";
}

}  // namespace kvault
