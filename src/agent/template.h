#pragma once
// Prompt templates: text with `{{name}}` placeholders (docs/agent.md, "Prompts").
//
//   auto text = RenderTemplate("Task: {{task_name}}", {{"task_name", "relu"}});
//
// A name is [a-z0-9_]+ with optional spaces inside the braces (`{{ name }}`). Values
// are inserted as is and never re-scanned, so a value holding `{{x}}` (task code,
// a model's answer) is safe. Errors: a `{{` without `}}`, a malformed name, or a
// placeholder with no value. Pure; thread-safe.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace kvault::agent {

using TemplateValues = std::map<std::string, std::string, std::less<>>;

Result<std::string> RenderTemplate(std::string_view text, const TemplateValues& values);

// The distinct placeholder names of `text`, in order of first use; Error as above
// for a malformed placeholder.
Result<std::vector<std::string>> Placeholders(std::string_view text);

}  // namespace kvault::agent
