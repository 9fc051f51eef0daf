#pragma once
// Finding fenced code blocks (``` or ~~~) in Markdown-like text, line by line.
//
// A fence opens on a line that, after any spaces or tabs, starts with three or more
// backticks or tildes; the rest of the line is the info string (for backticks it may
// not contain a backtick, else the line is prose, like inline code). The block closes
// on the first later line that, after spaces or tabs, holds only the same character at
// least as many times, and trailing whitespace. Lines inside a block are never
// examined for fences. '\r' before '\n' is dropped. Up to the opener's indentation is
// removed from each content line. Pure; thread-safe.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvault::llm {

struct FencedBlock {
  std::string language;  // first word of the info string, lower case ("" when none)
  std::string code;      // the content lines, each ending in '\n'
  size_t open_line = 0;  // 1-based line of the opening fence
};

struct FenceScan {
  std::vector<FencedBlock> blocks;            // closed blocks, in order
  std::optional<size_t> unterminated_line;    // 1-based line of a fence never closed
};

FenceScan ScanFences(std::string_view text);

}  // namespace kvault::llm
