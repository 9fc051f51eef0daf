#include "candidate/source_language.h"

#include <vector>

#include "util/strings.h"

namespace kvault {

std::string CodeOnly(const std::string& s) {
  std::string out = s;
  enum { kCode, kLine, kBlock, kString, kChar } state = kCode;
  for (size_t i = 0; i < out.size(); ++i) {
    char c = out[i], next = i + 1 < out.size() ? out[i + 1] : '\0';
    switch (state) {
      case kCode:
        if (c == '/' && next == '/') state = kLine;
        else if (c == '/' && next == '*') state = kBlock;
        else if (c == '"') state = kString;
        else if (c == '\'') state = kChar;
        else continue;
        out[i] = ' ';
        break;
      case kLine:
        if (c == '\n') state = kCode;
        else out[i] = ' ';
        break;
      case kBlock:
        if (c == '*' && next == '/') { out[i] = out[i + 1] = ' '; ++i; state = kCode; }
        else if (c != '\n') out[i] = ' ';
        break;
      case kString:
      case kChar:
        if (c == '\\' && next) { out[i] = ' '; if (out[i + 1] != '\n') out[i + 1] = ' '; ++i; }
        else if (c == (state == kString ? '"' : '\'')) { out[i] = ' '; state = kCode; }
        else if (c != '\n') out[i] = ' ';
        break;
    }
  }
  return out;
}

namespace {

std::string_view TrimLeft(std::string_view s) {
  const size_t at = s.find_first_not_of(" \t");
  return at == std::string_view::npos ? std::string_view() : s.substr(at);
}

bool Contains(std::string_view s, std::string_view what) { return s.find(what) != std::string_view::npos; }

// A line of Python text that starts (after indentation) with `word` followed by a
// blank, the line's end or one of `after`; a comment line never does.
bool AnyLineStartsWith(const std::vector<std::string>& lines, std::string_view word, std::string_view after) {
  for (const std::string& line : lines) {
    const std::string_view l = TrimLeft(line);
    if (!l.starts_with(word)) continue;
    const char next = l.size() > word.size() ? l[word.size()] : '\0';
    if (next == '\0' || next == ' ' || next == '\t' || next == '\r' || after.find(next) != std::string_view::npos)
      return true;
  }
  return false;
}

bool IsPython(const std::string& code) {
  const std::vector<std::string> lines = Split(code, '\n');
  const bool entry = AnyLineStartsWith(lines, "class ModelNew", "(:") ||
                     AnyLineStartsWith(lines, "def module_fn", "(") || AnyLineStartsWith(lines, "@triton.jit", "(");
  return entry && (AnyLineStartsWith(lines, "import", "") || AnyLineStartsWith(lines, "from", ""));
}

}  // namespace

std::string DetectSourceLanguage(const std::string& code) {
  if (IsPython(code)) return "python";
  // Includes name their header in a string literal: read from the directive lines.
  const std::string only = CodeOnly(code);
  const std::vector<std::string> code_lines = Split(only, '\n'), lines = Split(code, '\n');
  bool hip_header = false, cuda_header = false;
  for (size_t i = 0; i < code_lines.size() && i < lines.size(); ++i) {
    const std::string_view directive = TrimLeft(code_lines[i]);
    if (!directive.starts_with('#') || directive.find("include") == std::string_view::npos) continue;
    hip_header |= Contains(lines[i], "hip/hip_runtime");
    cuda_header |= Contains(lines[i], "cuda_runtime");
  }
  if (hip_header || Contains(only, "hipLaunchKernelGGL") || Contains(only, "__HIP_PLATFORM")) return "hip";
  if (cuda_header || Contains(only, "__global__") || Contains(only, "<<<")) return "cuda";
  return "cpp";
}

}  // namespace kvault
