#include "engine/held_out_key.h"

#include <cstdio>
#include <random>

#include "util/env_vars.h"

namespace kvault {

namespace {

std::string DrawKey() {
  if (auto set = KvaultEnv("KVAULT_HELD_OUT_KEY"); set && !set->empty()) return *set;
  std::random_device device;  // the kernel's entropy source on Linux
  std::string key;
  for (int i = 0; i < 4; ++i) {
    char word[9];
    std::snprintf(word, sizeof word, "%08x", static_cast<unsigned>(device()));
    key += word;
  }
  return key;
}

}  // namespace

const std::string& HeldOutKey() {
  static const std::string key = DrawKey();
  return key;
}

}  // namespace kvault
