#include "cli/lanes.h"

#include <algorithm>
#include <charconv>

namespace kvault::cli {

int AutoLanes(Backend backend, unsigned cpu_cores) {
  const int cores = static_cast<int>(std::max(1u, cpu_cores));
  if (backend == Backend::kCpu)
    return std::clamp(cores / static_cast<int>(kCoresPerCpuLane), 1, kMaxCpuLanes);
  return std::min(kGpuLanesPerDevice, cores);
}

Result<int> ParseJobs(const std::string& text, Backend backend, unsigned cpu_cores) {
  if (text == "auto") return AutoLanes(backend, cpu_cores);
  int n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1 || n > kMaxJobs)
    return Error{"--jobs " + text + ": give auto or a whole number from 1 to " + std::to_string(kMaxJobs)};
  return n;
}

std::string CheckJobsText(const std::string& text) {
  auto jobs = ParseJobs(text, Backend::kCpu, 1);
  return jobs ? "" : jobs.error();
}

}  // namespace kvault::cli
