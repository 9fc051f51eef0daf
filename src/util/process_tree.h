#pragma once
// A process and everything it started, stopped while something else is measured.
//
//   {
//     FrozenTree frozen(worker_pid, FrozenTree::kWithRoot);  // SIGSTOP to it and its descendants
//     ... time the reference ...
//   }                                  // SIGCONT to each of them
//
// Descendants are found through /proc/<pid>/task/<tid>/children (Linux 3.5 with
// CONFIG_PROC_CHILDREN), else by a scan of every /proc/<pid>/stat. Processes that a
// descendant forks while the tree is being stopped are found by the next pass; passes
// end when one finds nothing new (at most kFreezePasses). A process that left the tree
// by being re-parented outside it (no PID namespace around it) is not found: the
// worker sandbox's PID namespace keeps every orphan under its init, which is in the
// tree. The root is stopped only with kWithRoot. Signals that fail (the process is gone, or
// belongs to another user) are skipped. Not thread-safe.
#include <sys/types.h>

#include <string>
#include <vector>

namespace kvault {

// The fields of /proc/<pid>/stat after the command ("pid (comm) state ppid ...": comm
// may hold spaces and parentheses, the last ')' ends it), so that [0] is field 3
// (state) and [n] field n + 3; empty when the file cannot be read.
std::vector<std::string> ProcStatFields(pid_t pid);

// Every process below `root` (children, their children, ...), in no order.
std::vector<pid_t> Descendants(pid_t root);

class FrozenTree {
 public:
  static constexpr int kFreezePasses = 8;
  enum Root { kWithRoot, kWithoutRoot };

  FrozenTree(pid_t root, Root root_too);
  ~FrozenTree();  // continues every process it stopped
  FrozenTree(const FrozenTree&) = delete;
  FrozenTree& operator=(const FrozenTree&) = delete;

  // How many processes are stopped.
  size_t size() const { return stopped_.size(); }

 private:
  std::vector<pid_t> stopped_;
};

}  // namespace kvault
