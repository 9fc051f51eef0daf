#include "corpus/qa_chunk.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "corpus/normalize.h"
#include "util/files.h"
#include "util/sha256.h"
#include "util/strings.h"

namespace kvault::corpus {
namespace {

namespace fs = std::filesystem;

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// Line numbers (1-based) after which a top-level block ends.
std::vector<int> BlockEnds(std::string_view text, const std::vector<std::string_view>& lines,
                           LanguageFamily family) {
  std::vector<int> ends;
  if (family == LanguageFamily::kPython) {
    for (size_t i = 1; i < lines.size(); ++i) {
      std::string_view l = lines[i];
      if (!l.empty() && l[0] != ' ' && l[0] != '\t' && l[0] != '#' && l[0] != '\r' &&
          l[0] != ')' && l[0] != ']')
        ends.push_back(static_cast<int>(i));
    }
  } else {
    std::vector<int> depth_at_end(lines.size() + 1, 0);
    int depth = 0;
    std::vector<Token> tokens = Tokenize(text, family);
    size_t k = 0;
    for (size_t line = 1; line <= lines.size(); ++line) {
      for (; k < tokens.size() && tokens[k].line <= static_cast<int>(line); ++k) {
        if (tokens[k].text == "{") ++depth;
        if (tokens[k].text == "}") depth = std::max(0, depth - 1);
      }
      std::string_view line_text = Trim(lines[line - 1]);
      bool closes = line_text.ends_with("}") || line_text.ends_with(";");
      if (depth == 0 && closes) ends.push_back(static_cast<int>(line));
    }
  }
  ends.push_back(static_cast<int>(lines.size()));
  return ends;
}

SourceChunk MakeChunk(const std::string& file, const std::vector<std::string_view>& lines, int first,
                      int last, const std::string& language) {
  SourceChunk c;
  c.file = file;
  c.first_line = first;
  c.last_line = last;
  c.language = language;
  for (int l = first; l <= last; ++l) (c.text += lines[l - 1]) += '\n';
  KeyHasher key;
  key.Add("file", file);
  key.AddInt("first", first);
  key.AddInt("last", last);
  key.Add("text", c.text);
  c.id = key.Hex();
  return c;
}

const std::map<std::string, std::string, std::less<>>& ChunkExtensions() {
  static const std::map<std::string, std::string, std::less<>> m = {
      {".c", "c"},     {".cc", "cpp"},  {".cpp", "cpp"},   {".cxx", "cpp"}, {".h", "cpp"},
      {".hpp", "cpp"}, {".hip", "hip"}, {".cu", "cuda"},   {".cuh", "cuda"}, {".py", "python"}};
  return m;
}

}  // namespace

std::string SourceChunk::Lines(int a, int b) const {
  a = std::max(a, first_line), b = std::min(b, last_line);
  if (a > b) return "";
  std::vector<std::string_view> lines = SplitLines(text);
  std::string out;
  for (int l = a; l <= b && l - first_line < static_cast<int>(lines.size()); ++l)
    (out += lines[l - first_line]) += '\n';
  return out;
}

std::string SourceChunk::Citation() const {
  return file + ":" + std::to_string(first_line) + "-" + std::to_string(last_line);
}

std::vector<SourceChunk> ChunkSource(const std::string& file, std::string_view text,
                                     const std::string& language, const ChunkOptions& options) {
  std::vector<std::string_view> lines = SplitLines(text);
  std::vector<SourceChunk> chunks;
  if (lines.empty()) return chunks;
  std::vector<int> ends = BlockEnds(text, lines, LanguageFamilyOf(language, text));
  int start = 1;
  for (size_t e = 0; e < ends.size(); ++e) {
    int end = ends[e];
    if (end < start) continue;
    bool next_fits = e + 1 < ends.size() && ends[e + 1] - start + 1 <= options.max_lines;
    if (end - start + 1 < options.min_lines && next_fits) continue;  // join with the next block
    while (end - start + 1 > options.max_lines) {
      chunks.push_back(MakeChunk(file, lines, start, start + options.max_lines - 1, language));
      start += options.max_lines;
    }
    if (end >= start) chunks.push_back(MakeChunk(file, lines, start, end, language));
    start = end + 1;
  }
  chunks.erase(std::remove_if(chunks.begin(), chunks.end(),
                              [](const SourceChunk& c) {
                                return c.text.find_first_not_of(" \t\r\n") == std::string::npos;
                              }),
               chunks.end());
  return chunks;
}

Result<std::vector<SourceChunk>> ChunkTree(const std::string& root, const ChunkOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return Error{"source tree " + root + " is not a readable folder"};
  std::vector<std::pair<std::string, std::string>> files;  // relative path, language
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    auto ext = ChunkExtensions().find(it->path().extension().string());
    if (ext != ChunkExtensions().end()) files.emplace_back(fs::relative(it->path(), root).string(), ext->second);
  }
  if (ec) return Error{"cannot list " + root + ": " + ec.message()};
  std::sort(files.begin(), files.end());
  std::vector<SourceChunk> chunks;
  for (const auto& [rel, language] : files) {
    auto text = ReadFile((fs::path(root) / rel).string());
    if (!text) return Error{"cannot read " + rel + ": " + text.error()};
    auto file_chunks = ChunkSource(rel, *text, language, options);
    chunks.insert(chunks.end(), file_chunks.begin(), file_chunks.end());
  }
  return chunks;
}

}  // namespace kvault::corpus
