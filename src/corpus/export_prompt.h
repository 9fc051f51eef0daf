#pragma once
// The prompts of exported rows, rendered from `kvault gen`'s templates (prompts/,
// agent/prompt_library.h): the system message (hardware, the file contract, the
// one-fence rule) and the first generator prompt, exactly as gen sends them for the
// record's task, format and language. One template source, so a model trained on an
// export is asked in the words it learned from (docs/corpus.md, "Prompts").
//
//   ExportPrompts prompts({.root = "prompts", .version = "v1"});
//   auto p = prompts.Of(record);   // p->system, p->user
//
// Thread safety: none (prompt sets are loaded once per format and kept).
#include <map>
#include <string>

#include "agent/prompt_library.h"
#include "corpus/record.h"
#include "util/result.h"

namespace kvault::corpus {

struct PromptSettings {
  std::string root;            // the prompts folder
  std::string version = "v1";  // its version folder
  std::string hardware;        // prompts/hardware/<name>; "" by language (DefaultPromptHardware)
};

struct RenderedPrompt {
  std::string system;  // gen's system message
  std::string user;    // gen's first generator prompt
  std::string version;  // the prompt set's version ("v1-<hash>")
};

// The prompt format of a record: "<format>-<language>" as prompts/<v>/formats names it.
std::string PromptFormatOf(const KernelRecord& record);
// gen's target for a language when none is given: hip mi300x, cpp cpu, others h200.
std::string DefaultPromptHardware(const std::string& language);

// Error naming what is missing when the folder, its version's torch2kernel prompts or
// the named hardware description (`hardware` set) do not exist, with what does: a
// mistyped flag, said before anything is written rather than as every row left out.
Status CheckPromptSettings(const PromptSettings& settings);

class ExportPrompts {
 public:
  explicit ExportPrompts(PromptSettings settings) : settings_(std::move(settings)) {}
  // A kernel record's prompts; a qa record's user prompt is its question (no system).
  // Error naming the file for a format without a template, or a broken template.
  Result<RenderedPrompt> Of(const KernelRecord& record);

 private:
  PromptSettings settings_;
  std::map<std::string, agent::PromptSet> sets_;  // by format and hardware
};

}  // namespace kvault::corpus
