#pragma once
// Keeps a device quiet while one verification times on it (docs/timing.md, "Who runs
// what"). Lanes hold the gate shared around their correctness runs (work on the
// device); the lane that times holds it exclusively: it waits for the runs in flight
// to end, and no new run starts until it is done. Phase-fair: a lane asking for the
// exclusive hold blocks new shared holds at once, so a stream of correctness runs
// cannot starve the timer; and the runs blocked while one lane timed all start when it
// releases, before the next timer's hold, so a queue of timers cannot starve the runs
// either (a run waits for one exclusive hold at most, a timer for the holds queued
// before it and one batch of runs between each). One gate per device per process
// (other kvault processes on the machine are kept out of timing by the device's flock
// alone).
//
// Timers in a row: a timer that ends while another lane of this process is queued for
// the device's lock (Queue) hands the device on without letting the blocked runs in,
// so the next timer need not wait for a batch of runs to drain (each drain cost about
// half a second per timing on the H200 with large outputs; BENCHMARKS.md). At most
// kTimersInARow timers go in a row; then the blocked runs start, as above. A timer's
// own re-check (Downgrade) still runs beside the next one's drain.
//
//   auto gate = DeviceGate::For("cuda-0");
//   { auto run = gate->Share(); ... }                       // a correctness run
//   { auto q = gate->Queue(); lock = <device's lock>;        // a timer
//     auto t = gate->Exclude(std::chrono::seconds(5)); ... t.Downgrade(); ... }
//
// Thread-safe. A hold may be released by another thread than the one that took it.
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>

namespace kvault {

class DeviceGate {
 public:
  // The gate of `device` (for example "cuda-0") in this process.
  static std::shared_ptr<DeviceGate> For(const std::string& device);

  class Hold {
   public:
    Hold() = default;
    Hold(Hold&& o) noexcept
        : gate_(std::exchange(o.gate_, nullptr)), exclusive_(o.exclusive_), drained_(o.drained_) {}
    Hold& operator=(Hold&& o) noexcept;
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
    ~Hold() { Release(); }
    // Exclusive holds: whether every shared hold had ended when it was granted (false
    // when the wait ran out: a run that hangs cannot stall timing for long).
    bool drained() const { return drained_; }
    bool held() const { return gate_ != nullptr; }
    void Release();
    // An exclusive hold becomes a shared one at once (the timer's re-check), and the
    // device goes to a queued timer or to the blocked runs, as ReleaseExclusive.
    void Downgrade();
    // Another shared hold, granted at once beside this shared one (the members of a
    // group turn re-check beside their leader); empty when this one is not shared.
    Hold Also();

   private:
    friend class DeviceGate;
    Hold(DeviceGate* gate, bool exclusive, bool drained)
        : gate_(gate), exclusive_(exclusive), drained_(drained) {}
    DeviceGate* gate_ = nullptr;  // gates live as long as the process (For)
    bool exclusive_ = false;
    bool drained_ = true;
  };

  // Timers that may go in a row before the blocked runs start.
  static constexpr int kTimersInARow = 8;

  // A timer's place in the queue for the device's lock, from before it waits for the
  // lock until Exclude (or until it gives up). While one is queued, an ending timer
  // hands the device on (see above).
  class Queued {
   public:
    Queued() = default;
    Queued(Queued&& o) noexcept : gate_(std::exchange(o.gate_, nullptr)) {}
    Queued& operator=(Queued&&) = delete;
    Queued(const Queued&) = delete;
    ~Queued() { Leave(); }
    void Leave();

   private:
    friend class DeviceGate;
    explicit Queued(DeviceGate* gate) : gate_(gate) {}
    DeviceGate* gate_ = nullptr;
  };

  // Waits while an exclusive hold is held or asked for, or the device is being handed
  // from one timer to the next, until the next release that lets the blocked runs
  // start (which lets every run waiting then start, even if other timers wait).
  Hold Share();
  Queued Queue();
  // Blocks new shared holds, then waits up to `drain` for those in flight to end.
  // Exclusive holds exclude each other (without limit on the wait).
  Hold Exclude(std::chrono::milliseconds drain);

  int shared_holders() const;

  // A lane's membership of the device's gate, for as long as the lane lives: how many
  // lanes of this process use the device (members()). Their workers keep memory on it
  // even while another lane has the device to itself.
  class Member {
   public:
    Member() = default;
    Member(Member&& o) noexcept : gate_(std::exchange(o.gate_, nullptr)) {}
    Member& operator=(Member&&) = delete;
    Member(const Member&) = delete;
    Member& operator=(const Member&) = delete;
    ~Member();

   private:
    friend class DeviceGate;
    explicit Member(DeviceGate* gate) : gate_(gate) {}
    DeviceGate* gate_ = nullptr;
  };
  Member Join();
  int members() const;

  // Device memory leased to one verification, for as long as it holds the lease
  // (LeaseMemory), or the whole device's memory (LeaseWhole). Move-only; released by
  // its destructor.
  class MemoryLease {
   public:
    MemoryLease() = default;
    MemoryLease(MemoryLease&& o) noexcept
        : gate_(std::exchange(o.gate_, nullptr)),
          bytes_(std::exchange(o.bytes_, 0)),
          whole_(std::exchange(o.whole_, false)),
          ahead_of_(std::exchange(o.ahead_of_, kInLine)) {}
    MemoryLease& operator=(MemoryLease&& o) noexcept;
    MemoryLease(const MemoryLease&) = delete;
    MemoryLease& operator=(const MemoryLease&) = delete;
    ~MemoryLease() { Release(); }
    void Release();
    // A whole lease (LeaseWhole) becomes its own bytes again at once, and other leases
    // may be granted; one of 0 bytes is released. No-op on a lease that is not whole.
    void Narrow();
    bool held() const { return gate_ != nullptr; }
    bool whole() const { return whole_; }
    int64_t bytes() const { return bytes_; }

    // Whether it was granted ahead of a lease waiting for room (LeaseMemory).
    bool went_ahead() const { return ahead_of_ != kInLine; }

   private:
    friend class DeviceGate;
    static constexpr uint64_t kInLine = ~uint64_t{0};
    MemoryLease(DeviceGate* gate, int64_t bytes, uint64_t ahead_of = kInLine)
        : gate_(gate), bytes_(bytes), ahead_of_(ahead_of) {}
    DeviceGate* gate_ = nullptr;
    int64_t bytes_ = 0;
    bool whole_ = false;
    uint64_t ahead_of_ = kInLine;  // the ticket it went ahead of
  };
  // Blocks until `bytes` fit within `budget` beside the leases held, or no lease is held
  // (a verification larger than the budget has the device's memory to itself), in the
  // order asked, but for leases that go ahead of the first in line while it waits for
  // room and fit now: where the first would still fit beside every lease that went
  // ahead of it (they and it within the budget), any; it waits no longer than in strict
  // order (the leases it waits for were granted before it and only end). Where the first
  // is larger than the budget (it waits for no lease to be held), a small one (1/8 of
  // the budget) while a lease granted before the first still holds; the first then
  // waits at most for what is left of the small ones. None goes ahead of a whole lease
  // waited for.
  MemoryLease LeaseMemory(int64_t bytes, int64_t budget);
  // The device's memory to one verification (docs/timing.md, "Memory is shared"):
  // `lease`, that verification's own (empty when it has none), is given up, then this
  // waits, in the order asked with LeaseMemory, up to `wait` until no other lease is
  // held, and `lease` becomes whole (its own bytes again): no other lease is granted
  // until it is narrowed (MemoryLease::Narrow) or released. False when `wait` ran out
  // first: `lease` is then empty and the leases asked later are served as if this
  // had never asked.
  bool LeaseWhole(MemoryLease& lease, std::chrono::milliseconds wait);
  // A lease of no bytes, for candidate code that runs before its verification's lease
  // (a KernelBench file's load_inline calls noted): a whole lease waits for it to end,
  // and it is granted at once unless a whole lease is held or waited for (then after
  // it), whatever leases wait for room.
  MemoryLease Attend();
  int64_t leased_bytes() const;
  int whole_waiting() const;   // LeaseWhole calls waiting now
  int leases_waiting() const;  // LeaseMemory calls waiting now

  // What one lane's workers may hold on a device of `device_bytes` outside any lease
  // (docs/timing.md, "Memory is shared"): the device contexts of its reference worker,
  // its candidate's worker and the zygote's spare, and what the reference worker keeps
  // between requests (PyTorch's cache and the hand-over buffers, each at most
  // kvault_worker/device.py's KEEP_CACHED_BYTES or KEEP_CACHED_SHARE of the device; its
  // kept timing sides, session/reference.py's KEEP_BYTES; a flush buffer).
  static int64_t LaneResidueBytes(int64_t device_bytes);
  // The budget LeaseMemory shares out on a device of `device_bytes` used by `lanes`
  // lanes of this process: the device's memory less every lane's residue and a margin
  // (allocator rounding, fragmentation), and at least an eighth of it (lanes so many that
  // their residues, each a bound, would leave less: out of memory is judged alone then).
  static int64_t LeasableBytes(int64_t device_bytes, int lanes);

 private:
  DeviceGate() = default;
  void ReleaseShared();
  // Ends the exclusive hold, keeping a shared one when `keep_shared` (Downgrade).
  void ReleaseExclusive(bool keep_shared = false);
  void LeaveQueue();
  // Lets the blocked runs start (the next phase). mutex_ held.
  void OpenToRuns();
  // The next ticket of LeaseMemory or LeaseWhole may take its lease, skipping those
  // served ahead of their turn or whose LeaseWhole gave up. mutex_ held.
  void ServeNextLease();
  // Whether ticket `ticket`'s `bytes` may go ahead of the first lease in line now
  // (LeaseMemory). mutex_ held.
  bool MayGoAhead(uint64_t ticket, int64_t bytes, int64_t budget) const;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  int shared_ = 0;             // shared holds, including those granted but not yet woken
  int shared_blocked_ = 0;     // Share calls waiting for the next exclusive release
  unsigned long long releases_ = 0;  // exclusive releases so far: the phase
  int writers_waiting_ = 0;
  bool writer_ = false;
  int queued_ = 0;             // timers queued for the device's lock (Queue)
  bool handing_on_ = false;    // between a timer's end and the next queued timer's hold
  int in_a_row_ = 0;           // timers since the blocked runs last started
  int members_ = 0;            // lanes that joined (Member)
  int64_t leased_ = 0;         // bytes of the memory leases held
  int leases_ = 0;             // memory leases held
  uint64_t next_lease_ = 0;    // tickets of LeaseMemory calls, in the order asked
  uint64_t serving_lease_ = 0; // the ticket that may take its lease next
  struct Asked {
    int64_t bytes = 0;
    int64_t budget = 0;
  };
  std::map<uint64_t, Asked> waiting_leases_;  // tickets of LeaseMemory calls waiting
  std::set<uint64_t> skipped_leases_;  // tickets served ahead, or whose LeaseWhole gave up
  int64_t ahead_bytes_ = 0;            // bytes held by leases that went ahead of serving_lease_
  int ahead_leases_ = 0;               // and how many
  bool whole_ = false;                   // a lease holds the whole device's memory (LeaseWhole)
  int whole_waiting_ = 0;                // LeaseWhole calls waiting
};

}  // namespace kvault
