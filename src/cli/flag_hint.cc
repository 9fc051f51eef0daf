#include "cli/flag_hint.h"

#include <algorithm>
#include <vector>

namespace kvault::cli {
namespace {

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// Whether `name` (without dashes) is a long flag of `app` or of an app above it.
bool Knows(const CLI::App* app, const std::string& name) {
  for (; app != nullptr; app = app->get_parent())
    for (const CLI::Option* o : app->get_options())
      for (const std::string& l : o->get_lnames())
        if (l == name) return true;
  return false;
}

std::string Closest(const CLI::App* app, const std::string& name) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, name.size() / 4) + 1;
  for (const CLI::Option* o : app->get_options())
    for (const std::string& l : o->get_lnames())
      if (size_t d = EditDistance(name, l); d < best_distance) best_distance = d, best = l;
  return best;
}

}  // namespace

std::string UnknownFlagHint(CLI::App& app, int argc, const char* const* argv) {
  CLI::App* command = &app;
  std::string path = "kvault";
  int i = 1;
  for (; i < argc && argv[i][0] != '-'; ++i) {  // the subcommands, outermost first
    CLI::App* sub = nullptr;
    for (CLI::App* s : command->get_subcommands([](CLI::App*) { return true; }))
      if (s->get_name() == argv[i]) sub = s;
    if (sub == nullptr) break;
    command = sub;
    path += " " + std::string(argv[i]);
  }
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) continue;
    const std::string name = arg.substr(2, arg.find('=') - 2);
    if (Knows(command, name)) continue;
    const std::string close = Closest(command, name);
    return "unknown flag --" + name + " of " + path + (close.empty() ? "" : " (did you mean --" + close + "?)");
  }
  return "";
}

}  // namespace kvault::cli
