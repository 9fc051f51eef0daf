#include "agent/prompt_library.h"

#include <algorithm>

#include "agent/template.h"
#include "util/files.h"
#include "util/sha256.h"
#include "util/strings.h"

namespace kvault::agent {

const std::vector<std::string> kPlaceholders = {
    "task_name",     "task_source", "language",  "fence",     "hardware",  "format_contract",
    "baseline_source", "iteration", "ancestors", "history",   "candidate", "feedback",
    "verdict",       "parent"};

TemplateValues GeneratorValues(const PromptSet& set, const std::string& task_name, const std::string& task_source,
                               const std::string& baseline_source, int iteration, const std::string& parent) {
  return TemplateValues{{"task_name", task_name},
                        {"task_source", task_source},
                        {"language", set.format.name},
                        {"fence", set.format.fence},
                        {"hardware", set.hardware},
                        {"format_contract", set.format.contract},
                        {"baseline_source", baseline_source},
                        {"iteration", std::to_string(iteration)},
                        {"parent", parent.empty() ? "none" : parent},
                        {"ancestors", ""},
                        {"history", ""},
                        {"candidate", ""},
                        {"feedback", ""},
                        {"verdict", ""}};
}

Result<FormatSpec> ParseFormatFile(const std::string& name, const std::string& text) {
  FormatSpec spec;
  spec.name = name;
  size_t pos = 0;
  bool closed = false;
  while (pos < text.size()) {
    const size_t eol = std::min(text.find('\n', pos), text.size());
    const std::string_view line = Trim(std::string_view(text).substr(pos, eol - pos));
    pos = eol + 1;
    if (line == "---") {
      closed = true;
      break;
    }
    if (line.empty()) continue;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos)
      return Error{"format " + name + ": header line '" + std::string(line) + "' is not 'key: value'"};
    const std::string key(Trim(line.substr(0, colon)));
    const std::string value(Trim(line.substr(colon + 1)));
    if (key == "file_extension") spec.file_extension = value;
    else if (key == "fence") spec.fence = value;
    else return Error{"format " + name + ": unknown header key '" + key + "'"};
  }
  if (!closed) return Error{"format " + name + ": no '---' line ends the header"};
  if (spec.file_extension.empty() || spec.file_extension[0] != '.')
    return Error{"format " + name + ": header needs 'file_extension: .<ext>'"};
  if (spec.fence.empty()) return Error{"format " + name + ": header needs 'fence: <tag>'"};
  spec.contract = pos < text.size() ? text.substr(pos) : "";
  return spec;
}

Result<PromptSet> LoadPromptSet(const PromptSelection& sel) {
  for (const std::string* part : {&sel.version, &sel.mode, &sel.format, &sel.lang, &sel.hardware})
    if (part->empty() || part->find('/') != std::string::npos || *part == "." || *part == "..")
      return Error{"prompt selection: '" + *part + "' is not a valid name"};
  std::string hashed;  // (relative path, length, content) of every file used
  auto read = [&](const std::string& rel) -> Result<std::string> {
    auto text = ReadFile(sel.root + "/" + rel);
    if (!text) return Error{"prompt file " + sel.root + "/" + rel + ": " + text.error()};
    hashed += rel + '\0' + std::to_string(text->size()) + '\0' + *text;
    return text;
  };
  PromptSet set;
  const std::string dir = sel.version + "/" + sel.mode + "/";
  std::pair<const char*, std::string*> templates[] = {
      {"system.md", &set.system}, {"generate.md", &set.generate},
      {"optimize.md", &set.optimize}, {"reflect.md", &set.reflect}};
  for (auto& [file, out] : templates) {
    auto text = read(dir + file);
    if (!text) return Error{text.error()};
    auto names = Placeholders(*text);
    if (!names) return Error{"prompt file " + sel.root + "/" + dir + file + ": " + names.error()};
    for (const std::string& n : *names)
      if (std::find(kPlaceholders.begin(), kPlaceholders.end(), n) == kPlaceholders.end())
        return Error{"prompt file " + sel.root + "/" + dir + file + ": unknown placeholder '{{" + n +
                     "}}' (known: " + Join(kPlaceholders, ", ") + ")"};
    *out = std::move(*text);
  }
  const std::string format_name = sel.format + "-" + sel.lang;
  auto format_text = read(sel.version + "/formats/" + format_name + ".md");
  if (!format_text)
    return Error{format_text.error() + " (no prompts for --format " + sel.format + " --lang " +
                 sel.lang + " in version " + sel.version + ")"};
  auto spec = ParseFormatFile(format_name, *format_text);
  if (!spec) return Error{spec.error()};
  set.format = std::move(*spec);
  auto hardware = read("hardware/" + sel.hardware + ".md");
  if (!hardware) return Error{hardware.error()};
  set.hardware = std::move(*hardware);
  set.version = sel.version + "-" + Sha256Hex(hashed).substr(0, 12);
  return set;
}

}  // namespace kvault::agent
