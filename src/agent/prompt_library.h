#pragma once
// Versioned prompt templates on disk (docs/agent.md, "Prompts"):
//
//   <root>/<version>/<mode>/{system,generate,optimize,reflect}.md   templates
//   <root>/<version>/formats/<format>-<lang>.md                     a candidate format's contract
//   <root>/hardware/<name>.md                                       a target's description
//
// A format file starts with a header of `key: value` lines up to a line `---`:
// `file_extension` (".hip") and `fence` (the code-block tag asked for). Adding a
// language or format is adding such a file; adding a mode is adding a folder.
//
//   auto set = LoadPromptSet({.root = "prompts", .version = "v1", .mode = "torch2kernel",
//                             .format = "extension", .lang = "hip", .hardware = "mi300x"});
//   set->version  // "v1-3f2a9c01d4e7": the version plus a hash of every file used
//
// Every placeholder of every template is checked against kPlaceholders when loaded,
// so a typo fails before any model is called.
#include <string>
#include <vector>

#include "agent/template.h"
#include "util/result.h"

namespace kvault::agent {

// The names a template may use; the loop fills every one of them (docs/agent.md).
extern const std::vector<std::string> kPlaceholders;

struct PromptSelection {
  std::string root;        // the prompts folder
  std::string version;     // e.g. "v1"
  std::string mode;        // torch2kernel | kernel2kernel | modu2func
  std::string format;      // extension | native | functional | ...
  std::string lang;        // cpp | cuda | hip | python | triton
  std::string hardware;    // cpu | h200 | mi300x | ...
};

struct FormatSpec {
  std::string name;            // "<format>-<lang>"
  std::string file_extension;  // ".hip"
  std::string fence;           // "hip"
  std::string contract;        // the text after the header
};

struct PromptSet {
  std::string version;  // "<version>-<12 hex digits of SHA-256 over the files used>"
  std::string system, generate, optimize, reflect;  // templates
  FormatSpec format;
  std::string hardware;  // the hardware description text
};

// Error naming the file for a missing or unreadable file, a format header without
// file_extension or fence, or a template with an unknown or malformed placeholder.
Result<PromptSet> LoadPromptSet(const PromptSelection& selection);

// The values of a generator call's templates: the task, the set's format and hardware,
// the baseline kernel (kernel2kernel; "" otherwise), the iteration and the parent it
// refines ("none" for ""); ancestors, history, candidate, feedback and verdict empty,
// for the caller to fill. gen's loop renders every call from these, and the corpus
// exports their rows' prompts as gen's first call (one source of what gen sends).
TemplateValues GeneratorValues(const PromptSet& set, const std::string& task_name, const std::string& task_source,
                               const std::string& baseline_source, int iteration, const std::string& parent);

// Parses a format file's text (header, `---`, contract).
Result<FormatSpec> ParseFormatFile(const std::string& name, const std::string& text);

}  // namespace kvault::agent
