// Fuzzes candidate format detection (candidate/candidate.h). Input layout: the file
// name up to the first newline (at most 64 bytes; it picks the extension), then the
// candidate source.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "candidate/candidate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  size_t nl = in.find('\n');
  if (nl == std::string_view::npos || nl > 64) return 0;
  std::string name(in.substr(0, nl));
  if (name.find('/') != std::string::npos || name.find('\0') != std::string::npos) return 0;
  auto c = kvault::CandidateFromSource("/fuzz/" + name, std::string(in.substr(nl + 1)));
  if (c && (c->language.empty() || c->hash.size() != 64)) __builtin_trap();
  return 0;
}
