#include "sandbox/capabilities.h"

#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>

#include "util/json_parse.h"
#include "util/strings.h"
#include "util/subprocess.h"

namespace kvault {

bool HostCapabilities::Has(const std::string& layer) const {
  auto it = layers.find(layer);
  return it != layers.end() && it->is_string() && it->get<std::string>().empty();
}

std::string HostCapabilities::Why(const std::string& layer) const {
  auto it = layers.find(layer);
  if (it == layers.end() || !it->is_string()) return "not reported by the probe";
  return it->get<std::string>();
}

Result<HostCapabilities> ProbeHost(const std::string& launcher) {
  static std::mutex mu;
  static std::map<std::string, Result<HostCapabilities>> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(launcher); it != cache.end()) return it->second;
  auto probe = [&]() -> Result<HostCapabilities> {
    CommandSpec cmd;
    cmd.argv = {launcher, "sandbox-exec", "--probe"};
    auto r = RunCommand(cmd, std::chrono::seconds(30), 64 * 1024);
    if (!r) return Error{"cannot run the sandbox probe: " + r.error()};
    if (r->exit_code != 0)
      return Error{"sandbox probe " + DescribeTermination(r->exit_code, r->term_signal) + ": " +
                   Truncate(r->output, 500)};
    auto j = ParseJson(r->output, 4);
    if (!j || !j->is_object()) return Error{"sandbox probe answered: " + Truncate(r->output, 500)};
    return HostCapabilities{*j};
  };
  auto result = probe();
  cache.emplace(launcher, result);
  return result;
}

namespace {
std::atomic<bool> g_self_is_launcher{false};
}  // namespace

void DeclareSandboxLauncher() { g_self_is_launcher = true; }
bool SelfIsSandboxLauncher() { return g_self_is_launcher; }

std::string SelfExecutable() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

}  // namespace kvault
