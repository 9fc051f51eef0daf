#pragma once
// The machine-wide lock of one device for timings (docs/timing.md): an flock in
// <cache>/locks/, held against other lanes and other kvault processes, and hidden
// from candidate workers, so none can hold it to stall the others. Its note says
// when the last timing on the device ended (a monotonic time, which other processes
// read alike), and the next timing takes its warm-up from it: a device that ended a
// timing a moment ago still has its clocks up and needs only a short one.
//
//   auto lock = TimingLock::Acquire(options);        // waits up to timeouts.time
//   if (!lock) return infra_error(lock.error());
//   int warmup_ms = lock->WarmupMs(options.timing);  // rewarm_ms when recently used
//   ... warm-up and rounds ...
//   lock->GiveBack();                                // the note, then released
#include <optional>
#include <string>

#include "engine/options.h"
#include "util/files.h"
#include "util/result.h"

namespace kvault {

class TimingLock {
 public:
  // The lock of options' backend and device, held once it is had; Error after
  // options.timeouts.time of waiting (the device stayed busy), or without a lock folder.
  static Result<TimingLock> Acquire(const EngineOptions& options);

  // timing.rewarm_ms when the note says a timing on this device ended within
  // timing.rewarm_within_ms, else timing.warmup_ms (no note, an unreadable one, or older).
  int WarmupMs(const TimingSettings& timing) const;
  // Notes that a timing ends now and releases the lock. No-op once given back.
  void GiveBack();
  bool held() const { return lock_.has_value(); }

 private:
  explicit TimingLock(FileLock lock) : lock_(std::move(lock)) {}
  std::optional<FileLock> lock_;
};

// <cache>/locks/timing-<backend>-<device index>.lock
std::string TimingLockPath(const EngineOptions& options);

}  // namespace kvault
