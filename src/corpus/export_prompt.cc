#include "corpus/export_prompt.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "agent/template.h"

namespace kvault::corpus {
namespace {

namespace fs = std::filesystem;

// The names in `dir` (folders holding `inner`, or files ending in `suffix` without
// it), sorted and joined by ", "; "none" when there are none.
std::string NamesIn(const fs::path& dir, const std::string& suffix, const std::string& inner = "") {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (suffix.empty() ? fs::is_directory(it->path() / inner, ec) : name.size() > suffix.size() && name.ends_with(suffix))
      names.push_back(suffix.empty() ? name : name.substr(0, name.size() - suffix.size()));
  }
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

bool PlainName(const std::string& name) {
  return !name.empty() && name.find('/') == std::string::npos && name != "." && name != "..";
}

}  // namespace

std::string PromptFormatOf(const KernelRecord& r) {
  if (r.format == "triton" || r.language == "triton") return "triton-python";
  const std::string format = r.format.empty() || r.format == "source" ? "extension" : r.format;
  const std::string language = format == "kernelbench" ? "python" : r.language.empty() ? "cpp" : r.language;
  return format + "-" + language;
}

std::string DefaultPromptHardware(const std::string& language) {
  if (language == "hip") return "mi300x";
  if (language == "cpp") return "cpu";
  return "h200";
}

Status CheckPromptSettings(const PromptSettings& s) {
  std::error_code ec;
  const fs::path root(s.root);
  if (!fs::is_directory(root, ec)) return Error{"no prompts folder " + s.root + " (--prompts)"};
  if (!PlainName(s.version) || !fs::is_directory(root / s.version / "torch2kernel", ec))
    return Error{"no prompt version '" + s.version + "' in " + s.root + " (--prompt-version; there: " +
                 NamesIn(root, "", "torch2kernel") + ")"};
  if (!s.hardware.empty() &&
      (!PlainName(s.hardware) || !fs::is_regular_file(root / "hardware" / (s.hardware + ".md"), ec)))
    return Error{"no hardware description '" + s.hardware + "' in " + (root / "hardware").string() +
                 " (--prompt-hardware: " + NamesIn(root / "hardware", ".md") + ")"};
  return Status::Ok();
}

Result<RenderedPrompt> ExportPrompts::Of(const KernelRecord& r) {
  if (r.kind == kKindQa) return RenderedPrompt{"", r.qa.question, ""};
  const std::string format = PromptFormatOf(r);
  const std::string hardware = settings_.hardware.empty() ? DefaultPromptHardware(r.language) : settings_.hardware;
  const std::string key = format + "@" + hardware;
  auto set = sets_.find(key);
  if (set == sets_.end()) {
    agent::PromptSelection sel;
    sel.root = settings_.root;
    sel.version = settings_.version;
    sel.mode = "torch2kernel";
    sel.format = format.substr(0, format.find('-'));
    sel.lang = format.substr(format.find('-') + 1);
    sel.hardware = hardware;
    auto loaded = agent::LoadPromptSet(sel);
    if (!loaded) return Error{"the prompt of " + format + " records: " + loaded.error()};
    set = sets_.emplace(key, std::move(*loaded)).first;
  }
  const agent::PromptSet& p = set->second;
  // The values gen's loop gives its first generator call (torch2kernel: no baseline).
  const agent::TemplateValues values =
      agent::GeneratorValues(p, r.task.name, r.task.reference_source, "", 1, "");
  auto system = agent::RenderTemplate(p.system, values);
  if (!system) return Error{"system prompt: " + system.error()};
  auto user = agent::RenderTemplate(p.generate, values);
  if (!user) return Error{"user prompt: " + user.error()};
  return RenderedPrompt{*system, *user, p.version};
}

}  // namespace kvault::corpus
