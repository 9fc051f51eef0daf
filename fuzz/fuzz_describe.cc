// Fuzzes TaskInfoFromDescribe with the `task` object of a worker's describe answer
// (docs/worker-protocol.md), parsed as the engine parses worker responses.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "task/task_file.h"
#include "util/json_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parsed = kvault::ParseJson(std::string_view(reinterpret_cast<const char*>(data), size), 64);
  if (!parsed) return 0;
  kvault::TaskFile file{"fuzz", "/fuzz/fuzz.py", "", ""};
  auto info = kvault::TaskInfoFromDescribe(file, *parsed);
  if (!info) return 0;
  if (info->seeds < 3 || info->cases.empty() || info->CorrectnessCases().empty()) __builtin_trap();
  (void)info->PerformanceCases();
  return 0;
}
