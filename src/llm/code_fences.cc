#include "llm/code_fences.h"

#include <cctype>

namespace kvault::llm {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

size_t LeadingBlanks(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && IsBlank(line[i])) ++i;
  return i;
}

struct Opener {
  char fence_char;
  size_t run;
  size_t indent;
  std::string language;
};

std::optional<Opener> ParseOpener(std::string_view line) {
  size_t indent = LeadingBlanks(line);
  if (indent >= line.size() || (line[indent] != '`' && line[indent] != '~')) return std::nullopt;
  char c = line[indent];
  size_t run = 0;
  while (indent + run < line.size() && line[indent + run] == c) ++run;
  if (run < 3) return std::nullopt;
  std::string_view info = line.substr(indent + run);
  if (c == '`' && info.find('`') != std::string_view::npos) return std::nullopt;
  size_t start = LeadingBlanks(info);
  while (start < info.size() && (info[start] == '{' || info[start] == '.')) ++start;
  size_t end = start;
  while (end < info.size() && !IsBlank(info[end]) && info[end] != '{' && info[end] != '}') ++end;
  std::string language;
  for (char ch : info.substr(start, end - start)) {
    language.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
  }
  return Opener{c, run, indent, std::move(language)};
}

bool IsCloser(std::string_view line, const Opener& open) {
  size_t i = LeadingBlanks(line);
  size_t run = 0;
  while (i + run < line.size() && line[i + run] == open.fence_char) ++run;
  if (run < open.run) return false;
  for (size_t k = i + run; k < line.size(); ++k) {
    if (!IsBlank(line[k])) return false;
  }
  return true;
}

// Drops up to `indent` leading blanks.
std::string_view Dedent(std::string_view line, size_t indent) {
  size_t i = 0;
  while (i < indent && i < line.size() && IsBlank(line[i])) ++i;
  return line.substr(i);
}

}  // namespace

FenceScan ScanFences(std::string_view text) {
  FenceScan scan;
  std::optional<Opener> open;
  FencedBlock block;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    bool last = nl == std::string_view::npos;
    std::string_view line = text.substr(pos, last ? std::string_view::npos : nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++line_no;
    if (open) {
      if (IsCloser(line, *open)) {
        scan.blocks.push_back(std::move(block));
        block = FencedBlock{};
        open.reset();
      } else {
        block.code.append(Dedent(line, open->indent));
        block.code.push_back('\n');
      }
    } else if (auto opener = ParseOpener(line)) {
      open = std::move(opener);
      block.language = open->language;
      block.open_line = line_no;
    }
    if (last) break;
    pos = nl + 1;
  }
  if (open) scan.unterminated_line = block.open_line;
  return scan;
}

}  // namespace kvault::llm
