#pragma once
// Test helper: engine options (cpu backend, otherwise defaults) whose cache is a fresh
// temporary folder, removed with the helper. Tests only.
//
//   TestCache cache;
//   ASSERT_TRUE(cache.ok());
//   DeviceSession session(cache.options, "cpu", factory);
#include <optional>
#include <string>

#include "engine/options.h"
#include "util/files.h"

namespace kvault::testing {

struct TestCache {
  TestCache() {
    if (auto dir = TempDir::Create()) folder.emplace(std::move(*dir));
    options.cache_dir = ok() ? folder->path() : std::string();
  }
  bool ok() const { return folder.has_value(); }
  const std::string& path() const { return folder->path(); }

  std::optional<TempDir> folder;
  EngineOptions options;
};

}  // namespace kvault::testing
