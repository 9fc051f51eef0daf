#include "util/process_tree.h"

#include <dirent.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace kvault {
namespace {

bool ReadChildrenFiles(pid_t pid, std::vector<pid_t>* out) {
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = ::opendir(tasks.c_str());
  if (dir == nullptr) return false;
  bool any = false;
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream in(tasks + "/" + e->d_name + "/children");
    if (!in) continue;
    any = true;
    long child = 0;
    while (in >> child) out->push_back(static_cast<pid_t>(child));
  }
  ::closedir(dir);
  return any;
}

// Parent of every process, from /proc/<pid>/stat (field 4).
std::multimap<pid_t, pid_t> ChildrenByScan() {
  std::multimap<pid_t, pid_t> children;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return children;
  while (dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0') continue;
    const std::vector<std::string> fields = ProcStatFields(static_cast<pid_t>(pid));
    if (fields.size() < 2) continue;
    const long ppid = std::strtol(fields[1].c_str(), &end, 10);
    if (end != fields[1].c_str()) children.emplace(static_cast<pid_t>(ppid), static_cast<pid_t>(pid));
  }
  ::closedir(dir);
  return children;
}

}  // namespace

std::vector<std::string> ProcStatFields(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream rest(stat.substr(close + 1));
  std::vector<std::string> fields;
  for (std::string field; rest >> field;) fields.push_back(std::move(field));
  return fields;
}

std::vector<pid_t> Descendants(pid_t root) {
  std::vector<pid_t> found, frontier{root};
  std::multimap<pid_t, pid_t> scanned;
  bool scan = false;
  while (!frontier.empty()) {
    const pid_t pid = frontier.back();
    frontier.pop_back();
    std::vector<pid_t> kids;
    if (!scan && !ReadChildrenFiles(pid, &kids) && pid == root) {
      scan = true;  // no children files here: one scan of /proc serves the whole walk
      scanned = ChildrenByScan();
    }
    if (scan) {
      auto [first, last] = scanned.equal_range(pid);
      for (auto it = first; it != last; ++it) kids.push_back(it->second);
    }
    for (pid_t k : kids) {
      if (k == root || std::find(found.begin(), found.end(), k) != found.end()) continue;
      found.push_back(k);
      frontier.push_back(k);
    }
  }
  return found;
}

FrozenTree::FrozenTree(pid_t root, Root root_too) {
  if (root <= 0) return;
  if (root_too == kWithRoot && ::kill(root, SIGSTOP) == 0) stopped_.push_back(root);
  for (int pass = 0; pass < kFreezePasses; ++pass) {
    bool added = false;
    for (pid_t pid : Descendants(root)) {
      if (std::find(stopped_.begin(), stopped_.end(), pid) != stopped_.end()) continue;
      if (::kill(pid, SIGSTOP) == 0) {
        stopped_.push_back(pid);
        added = true;
      }
    }
    if (!added) break;
  }
}

FrozenTree::~FrozenTree() {
  for (pid_t pid : stopped_) ::kill(pid, SIGCONT);
}

}  // namespace kvault
