#include "agent/template.h"

#include <algorithm>

namespace kvault::agent {
namespace {

bool IsNameChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }

size_t LineOf(std::string_view text, size_t pos) {
  return 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + pos, '\n'));
}

// Calls on_text(literal) and on_name(name, line) in order; stops at the first error.
template <class OnText, class OnName>
Status Scan(std::string_view text, OnText on_text, OnName on_name) {
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t open = text.find("{{", pos);
    if (open == std::string_view::npos) {
      on_text(text.substr(pos));
      break;
    }
    on_text(text.substr(pos, open - pos));
    const size_t close = text.find("}}", open + 2);
    if (close == std::string_view::npos)
      return Error{"line " + std::to_string(LineOf(text, open)) + ": '{{' without '}}'"};
    std::string_view inner = text.substr(open + 2, close - open - 2);
    while (!inner.empty() && inner.front() == ' ') inner.remove_prefix(1);
    while (!inner.empty() && inner.back() == ' ') inner.remove_suffix(1);
    if (inner.empty() || !std::all_of(inner.begin(), inner.end(), IsNameChar))
      return Error{"line " + std::to_string(LineOf(text, open)) + ": malformed placeholder '{{" +
                   std::string(text.substr(open + 2, close - open - 2)) + "}}'"};
    if (Status s = on_name(inner, LineOf(text, open)); !s) return s;
    pos = close + 2;
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> RenderTemplate(std::string_view text, const TemplateValues& values) {
  std::string out;
  out.reserve(text.size());
  Status s = Scan(
      text, [&](std::string_view literal) { out.append(literal); },
      [&](std::string_view name, size_t line) -> Status {
        auto it = values.find(name);
        if (it == values.end())
          return Error{"line " + std::to_string(line) + ": placeholder '{{" + std::string(name) +
                       "}}' has no value"};
        out.append(it->second);
        return Status::Ok();
      });
  if (!s) return Error{s.error()};
  return out;
}

Result<std::vector<std::string>> Placeholders(std::string_view text) {
  std::vector<std::string> names;
  Status s = Scan(
      text, [](std::string_view) {},
      [&](std::string_view name, size_t) -> Status {
        if (std::find(names.begin(), names.end(), name) == names.end()) names.emplace_back(name);
        return Status::Ok();
      });
  if (!s) return Error{s.error()};
  return names;
}

}  // namespace kvault::agent
