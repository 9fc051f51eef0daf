#include "corpus/export_prompt.h"

#include "agent/template.h"

namespace kvault::corpus {

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
  // The values gen's loop gives its first generator call (agent/loop.cc).
  agent::TemplateValues values = {{"task_name", r.task.name},
                                  {"task_source", r.task.reference_source},
                                  {"language", p.format.name},
                                  {"fence", p.format.fence},
                                  {"hardware", p.hardware},
                                  {"format_contract", p.format.contract},
                                  {"baseline_source", ""},
                                  {"iteration", "1"},
                                  {"parent", "none"},
                                  {"ancestors", ""},
                                  {"history", ""},
                                  {"candidate", ""},
                                  {"feedback", ""},
                                  {"verdict", ""}};
  auto system = agent::RenderTemplate(p.system, values);
  if (!system) return Error{"system prompt: " + system.error()};
  auto user = agent::RenderTemplate(p.generate, values);
  if (!user) return Error{"user prompt: " + user.error()};
  return RenderedPrompt{*system, *user, p.version};
}

}  // namespace kvault::corpus
