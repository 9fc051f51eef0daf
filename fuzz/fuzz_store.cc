// Fuzzes opening a store (docs/store.md) whose database file holds arbitrary bytes,
// and reading every record back. Each input is written to the same file in a
// private temporary folder; the WAL and shared-memory files are removed after each.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "store/store.h"
#include "util/files.h"

namespace {
const kvault::TempDir& Dir() {
  static auto dir = kvault::TempDir::Create("", "kvault-fuzz-store");
  if (!dir) __builtin_trap();
  return *dir;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = Dir().Join("fuzz.db");
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path + suffix).c_str());
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) __builtin_trap();
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  {
    auto store = kvault::Store::Open(path);
    if (!store) return 0;
    auto runs = (*store)->ListRuns();
    if (!runs) return 0;
    for (size_t i = 0; i < runs->size() && i < 8; ++i) {
      auto records = (*store)->ListRun((*runs)[i]);
      if (!records) continue;
      for (const kvault::AttemptRecord& r : *records) {
        (void)r.cases.dump();
        (void)r.environment.dump();
        (void)(*store)->Find(r.run, r.task, r.candidate_hash, r.backend, r.arch);
      }
    }
  }
  return 0;
}
