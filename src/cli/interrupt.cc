#include "cli/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <thread>

#include "cli/commands.h"
#include "util/child_process.h"

namespace kvault::cli {
namespace {

std::atomic<bool> g_interrupted{false};

}  // namespace

InterruptGuard::InterruptGuard() : flag_(&g_interrupted) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    int sig = 0;
    while (sigwait(&set, &sig) != 0) {
    }
    g_interrupted.store(true);
    // Children started after this one (a queued build, a replaced worker) are
    // killed as well, until the command has wound down and exits.
    const timespec tick{0, 50 * 1000 * 1000};
    for (;;) {
      ChildProcess::StopAll();
      if (sigtimedwait(&set, nullptr, &tick) > 0) _exit(kExitInterrupted);
    }
  }).detach();
}

}  // namespace kvault::cli
