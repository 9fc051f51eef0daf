#include "engine/timing_lock.h"

#include <chrono>
#include <string_view>

namespace kvault {
namespace {

// The note's text (docs/timing.md, "Warm-up"), followed by MonotonicNowNs().
constexpr std::string_view kTimingEndedAt = "timing ended at ";

// steady_clock is the machine's monotonic clock: other processes read it alike.
long long MonotonicNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string TimingLockPath(const EngineOptions& options) {
  return options.cache_dir + "/locks/timing-" + std::string(ToString(options.backend)) + "-" +
         std::to_string(options.device_index) + ".lock";
}

Result<TimingLock> TimingLock::Acquire(const EngineOptions& options) {
  if (auto st = EnsureDir(options.cache_dir + "/locks"); !st) return Error{"no lock folder: " + st.error()};
  auto lock = FileLock::Acquire(TimingLockPath(options), options.timeouts.time);
  if (!lock)
    return Error{"the device stayed busy with other timings for " +
                 std::to_string(options.timeouts.time.count() / 1000) + " s (" + lock.error() + ")"};
  return TimingLock(std::move(*lock));
}

int TimingLock::WarmupMs(const TimingSettings& timing) const {
  const std::string note = lock_ ? lock_->Note() : std::string();
  if (note.rfind(kTimingEndedAt, 0) != 0) return timing.warmup_ms;
  long long ended_ns = 0;
  try {
    ended_ns = std::stoll(note.substr(kTimingEndedAt.size()));
  } catch (const std::exception&) {
    return timing.warmup_ms;
  }
  const long long ago_ns = MonotonicNowNs() - ended_ns;
  const bool warm = ago_ns >= 0 && ago_ns <= static_cast<long long>(timing.rewarm_within_ms) * 1'000'000;
  return warm ? timing.rewarm_ms : timing.warmup_ms;
}

void TimingLock::GiveBack() {
  if (!lock_) return;
  (void)lock_->SetNote(std::string(kTimingEndedAt) + std::to_string(MonotonicNowNs()));
  lock_.reset();
}

}  // namespace kvault
