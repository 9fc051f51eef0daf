// Fuzzes code extraction from LLM answers (llm/answer.h). Input layout: one options
// byte (bits 0-2 pick the expected language, bit 3 a tiny size cap), then the answer.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "llm/answer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const char* const kLanguages[] = {"", "cpp", "cuda", "hip", "python", "triton", "mojo", ""};
  kvault::llm::ExtractOptions options;
  options.expected_language = kLanguages[data[0] & 7];
  if (data[0] & 8) options.max_code_bytes = 16;
  std::string_view answer(reinterpret_cast<const char*>(data + 1), size - 1);
  auto r = kvault::llm::ExtractCode(answer, options);
  if (r) {
    // Accepted code is never empty, ends with one newline, fits the cap, and is part
    // of the answer (JSON escapes aside).
    if (r->code.empty() || r->code.back() != '\n' || r->code.size() > options.max_code_bytes) __builtin_trap();
    if (r->source != kvault::llm::CodeSource::kJson && r->code.size() > answer.size() + 1) __builtin_trap();
  } else if (r.error().find("Reply with exactly one fenced code block") == std::string::npos) {
    __builtin_trap();  // every failure tells the model how to answer
  }
  return 0;
}
