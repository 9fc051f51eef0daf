#include "engine/device_gate.h"

#include <algorithm>
#include <map>
#include <utility>

#include "engine/worker_limits.h"

namespace kvault {

std::shared_ptr<DeviceGate> DeviceGate::For(const std::string& device) {
  static std::mutex registry_mutex;
  static std::map<std::string, std::shared_ptr<DeviceGate>> registry;
  std::lock_guard<std::mutex> hold(registry_mutex);
  auto& gate = registry[device];
  if (!gate) gate.reset(new DeviceGate());
  return gate;
}

DeviceGate::Hold& DeviceGate::Hold::operator=(Hold&& o) noexcept {
  if (this != &o) {
    Release();
    gate_ = std::exchange(o.gate_, nullptr);
    exclusive_ = o.exclusive_;
    drained_ = o.drained_;
  }
  return *this;
}

void DeviceGate::Hold::Release() {
  if (!gate_) return;
  if (exclusive_) {
    gate_->ReleaseExclusive();
  } else {
    gate_->ReleaseShared();
  }
  gate_ = nullptr;
}

void DeviceGate::Hold::Downgrade() {
  if (!gate_ || !exclusive_) return;
  gate_->ReleaseExclusive(/*keep_shared=*/true);
  exclusive_ = false;
}

DeviceGate::Hold DeviceGate::Hold::Also() {
  if (!gate_ || exclusive_) return Hold();
  std::lock_guard<std::mutex> lock(gate_->mutex_);
  ++gate_->shared_;
  return Hold(gate_, /*exclusive=*/false, /*drained=*/true);
}

void DeviceGate::Queued::Leave() {
  if (gate_) std::exchange(gate_, nullptr)->LeaveQueue();
}

DeviceGate::Queued DeviceGate::Queue() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++queued_;
  return Queued(this);
}

void DeviceGate::LeaveQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --queued_;
    // The timer the device was handed to gave up (its lock not had in time): the
    // runs go on.
    if (handing_on_ && queued_ == 0 && writers_waiting_ == 0) OpenToRuns();
  }
  changed_.notify_all();
}

DeviceGate::Hold DeviceGate::Share() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!writer_ && writers_waiting_ == 0 && !handing_on_) {
    ++shared_;
  } else {
    // Granted by the next exclusive release (ReleaseExclusive counts it in shared_).
    const unsigned long long phase = releases_;
    ++shared_blocked_;
    changed_.wait(lock, [&] { return releases_ != phase; });
  }
  return Hold(this, /*exclusive=*/false, /*drained=*/true);
}

DeviceGate::Hold DeviceGate::Exclude(std::chrono::milliseconds drain) {
  std::unique_lock<std::mutex> lock(mutex_);
  ++writers_waiting_;
  changed_.wait(lock, [&] { return !writer_; });
  writer_ = true;
  handing_on_ = false;
  const bool drained = changed_.wait_for(lock, drain, [&] { return shared_ == 0; });
  --writers_waiting_;
  return Hold(this, /*exclusive=*/true, drained);
}

int DeviceGate::shared_holders() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return shared_;
}

void DeviceGate::ReleaseShared() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --shared_;
  }
  changed_.notify_all();
}

void DeviceGate::ReleaseExclusive(bool keep_shared) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    writer_ = false;
    if (keep_shared) ++shared_;
    if ((queued_ > 0 || writers_waiting_ > 0) && ++in_a_row_ < kTimersInARow) {
      handing_on_ = true;  // the next timer's drain waits for no new run
    } else {
      OpenToRuns();
    }
  }
  changed_.notify_all();
}

void DeviceGate::OpenToRuns() {
  handing_on_ = false;
  in_a_row_ = 0;
  shared_ += std::exchange(shared_blocked_, 0);  // the runs that waited go first
  ++releases_;
}

DeviceGate::Member DeviceGate::Join() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++members_;
  return Member(this);
}

DeviceGate::Member::~Member() {
  if (!gate_) return;
  std::lock_guard<std::mutex> lock(gate_->mutex_);
  --gate_->members_;
}

int DeviceGate::members() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return members_;
}

namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
// A worker's CUDA context with PyTorch's kernels loaded (an H100, CUDA 12): about this.
constexpr int64_t kContextBytes = kGiB / 2;
// The reference worker, the candidate's, the zygote's spare (a lane that starts each
// task's reference worker ahead, ReferenceWorkers::kPerTask, has a fourth from its
// describe on: the margin's, 1/16 of the device against half a GiB a lane).
constexpr int kContextsPerLane = 3;
// The worker's own bounds (worker_limits.h).
using worker_limits::kFlushBufferBytes;
using worker_limits::kKeepCachedBytes;
using worker_limits::kKeepCachedShare;
using worker_limits::kKeptSidesBytes;
constexpr int64_t kMarginShare = 16;  // 1/16 of the device's memory
constexpr int64_t kFloorShare = 8;    // at least 1/8 of it leased
// Leases of at most this share of the budget may go ahead of one larger than the budget.
constexpr int64_t kAheadOfOversizeShare = 8;

}  // namespace

int64_t DeviceGate::LaneResidueBytes(int64_t device_bytes) {
  const int64_t kept = std::min(kKeepCachedBytes, device_bytes / kKeepCachedShare);
  return kContextsPerLane * kContextBytes + 2 * kept + kKeptSidesBytes + kFlushBufferBytes;
}

int64_t DeviceGate::LeasableBytes(int64_t device_bytes, int lanes) {
  const int64_t left = device_bytes - std::max(1, lanes) * LaneResidueBytes(device_bytes) - device_bytes / kMarginShare;
  return std::max(left, device_bytes / kFloorShare);
}

DeviceGate::MemoryLease DeviceGate::LeaseMemory(int64_t bytes, int64_t budget) {
  std::unique_lock<std::mutex> lock(mutex_);
  const uint64_t ticket = next_lease_++;
  waiting_leases_[ticket] = {bytes, budget};
  bool ahead = false;
  changed_.wait(lock, [&] {
    if (whole_) return false;
    if (serving_lease_ == ticket) return leases_ == 0 || leased_ + bytes <= budget;
    ahead = MayGoAhead(ticket, bytes, budget);
    return ahead;
  });
  waiting_leases_.erase(ticket);
  ++leases_;
  leased_ += bytes;
  if (ahead) {
    skipped_leases_.insert(ticket);
    ahead_bytes_ += bytes;
    ++ahead_leases_;
    return MemoryLease(this, bytes, serving_lease_);
  }
  ServeNextLease();
  changed_.notify_all();  // the next ticket may fit too
  return MemoryLease(this, bytes);
}

bool DeviceGate::MayGoAhead(uint64_t ticket, int64_t bytes, int64_t budget) const {
  if (whole_waiting_ > 0 || leases_ == 0 || leased_ + bytes > budget) return false;
  const auto first = waiting_leases_.find(serving_lease_);
  if (first == waiting_leases_.end() || first->first >= ticket) return false;
  const Asked& head = first->second;
  if (head.bytes <= head.budget) {
    if (leased_ + head.bytes <= head.budget) return false;  // it fits: it goes first
    // It must fit beside every lease that went ahead of it, this one too, once the
    // leases it waits for have ended: it waits no longer.
    return ahead_bytes_ + bytes + head.bytes <= std::min(budget, head.budget);
  }
  // Larger than the budget, it waits until no lease is held: a small lease goes ahead
  // only while leases granted before the first hold it back anyway; once they end, the
  // first waits at most for what is left of the small ones' verifications.
  return leases_ > ahead_leases_ && bytes <= budget / kAheadOfOversizeShare;
}

bool DeviceGate::LeaseWhole(MemoryLease& lease, std::chrono::milliseconds wait) {
  const int64_t bytes = lease.bytes_;
  lease.Release();  // given up while waiting: two lanes asking at once must not wait for each other
  std::unique_lock<std::mutex> lock(mutex_);
  const uint64_t ticket = next_lease_++;
  ++whole_waiting_;
  const bool had = changed_.wait_for(lock, wait, [&] { return serving_lease_ == ticket && !whole_ && leases_ == 0; });
  --whole_waiting_;
  if (!had) {
    if (serving_lease_ == ticket) {
      ServeNextLease();
    } else {
      skipped_leases_.insert(ticket);
    }
    lock.unlock();
    changed_.notify_all();
    return false;
  }
  ServeNextLease();
  ++leases_;
  leased_ += bytes;
  whole_ = true;
  lease.gate_ = this;
  lease.bytes_ = bytes;
  lease.whole_ = true;
  return true;
}

DeviceGate::MemoryLease DeviceGate::Attend() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !whole_ && whole_waiting_ == 0; });
  ++leases_;
  return MemoryLease(this, 0);
}

void DeviceGate::ServeNextLease() {
  ++serving_lease_;
  while (skipped_leases_.erase(serving_lease_) > 0) ++serving_lease_;
  // The leases that went ahead of the last one are in line before the next.
  ahead_bytes_ = 0;
  ahead_leases_ = 0;
}

DeviceGate::MemoryLease& DeviceGate::MemoryLease::operator=(MemoryLease&& o) noexcept {
  if (this != &o) {
    Release();
    gate_ = std::exchange(o.gate_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    whole_ = std::exchange(o.whole_, false);
    ahead_of_ = std::exchange(o.ahead_of_, kInLine);
  }
  return *this;
}

void DeviceGate::MemoryLease::Release() {
  if (!gate_) return;
  {
    std::lock_guard<std::mutex> lock(gate_->mutex_);
    --gate_->leases_;
    gate_->leased_ -= bytes_;
    if (whole_) gate_->whole_ = false;
    if (ahead_of_ == gate_->serving_lease_) {
      gate_->ahead_bytes_ -= bytes_;
      --gate_->ahead_leases_;
    }
  }
  gate_->changed_.notify_all();
  gate_ = nullptr;
  bytes_ = 0;
  whole_ = false;
  ahead_of_ = kInLine;
}

void DeviceGate::MemoryLease::Narrow() {
  if (!gate_ || !whole_) return;
  if (bytes_ == 0) {
    Release();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(gate_->mutex_);
    gate_->whole_ = false;
  }
  whole_ = false;
  gate_->changed_.notify_all();
}

int64_t DeviceGate::leased_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return leased_;
}

int DeviceGate::whole_waiting() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return whole_waiting_;
}

int DeviceGate::leases_waiting() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(waiting_leases_.size());
}

}  // namespace kvault
