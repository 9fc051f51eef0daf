#include "engine/device_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace kvault {
namespace {

using namespace std::chrono_literals;

TEST(DeviceGateTest, SharedHoldsCoexistAndTheExclusiveWaitsForThem) {
  auto gate = DeviceGate::For("test-coexist");
  auto a = gate->Share();
  auto b = gate->Share();
  EXPECT_EQ(gate->shared_holders(), 2);
  std::atomic<bool> timing{false};
  std::thread timer([&] {
    auto t = gate->Exclude(10s);
    timing = true;
    EXPECT_TRUE(t.drained());
    EXPECT_EQ(gate->shared_holders(), 0);
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(timing.load());  // two runs in flight
  a.Release();
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(timing.load());  // one still in flight
  b.Release();
  timer.join();
  EXPECT_TRUE(timing.load());
}

TEST(DeviceGateTest, AWaitingTimerBlocksNewRuns) {
  auto gate = DeviceGate::For("test-writer-first");
  auto run = gate->Share();
  std::atomic<bool> timed{false}, second_run{false};
  std::thread timer([&] {
    auto t = gate->Exclude(10s);
    std::this_thread::sleep_for(30ms);
    timed = true;
  });
  std::this_thread::sleep_for(30ms);  // the timer now waits for `run`
  std::thread other([&] {
    auto r = gate->Share();
    second_run = true;
    EXPECT_TRUE(timed.load());  // only after the timing
  });
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(second_run.load());
  run.Release();
  timer.join();
  other.join();
  EXPECT_TRUE(second_run.load());
}

TEST(DeviceGateTest, AHangingRunCannotStallTheTimerPastTheDrainLimit) {
  auto gate = DeviceGate::For("test-drain-limit");
  auto hanging = gate->Share();
  const auto t0 = std::chrono::steady_clock::now();
  auto t = gate->Exclude(50ms);
  EXPECT_FALSE(t.drained());
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 50ms);
  std::atomic<bool> new_run{false};
  std::thread other([&] {
    auto r = gate->Share();
    new_run = true;
  });
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(new_run.load());  // still held off while the timer holds the gate
  t.Release();
  other.join();
  EXPECT_TRUE(new_run.load());
}

TEST(DeviceGateTest, RunsBlockedByATimerStartWhenNoTimerIsQueued) {
  auto gate = DeviceGate::For("test-phase-fair");
  auto first = gate->Exclude(1s);
  std::atomic<bool> run_started{false};
  std::thread run([&] {
    auto r = gate->Share();
    run_started = true;
  });
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(run_started.load());  // blocked while the timer holds the gate
  first.Release();
  run.join();
  EXPECT_TRUE(run_started.load());
}

// A queued timer gets the device from the one ending, its re-check beside the next
// drain; the runs blocked meanwhile start after it.
TEST(DeviceGateTest, AQueuedTimerGoesBeforeTheBlockedRuns) {
  auto gate = DeviceGate::For("test-in-a-row");
  auto first = gate->Exclude(1s);
  std::atomic<int> order{0}, run_at{0}, second_timer_at{0};
  std::atomic<bool> recheck_ended{false};
  std::thread second_timer([&] {
    auto queued = gate->Queue();
    std::this_thread::sleep_for(40ms);  // waiting for the device's lock
    auto t = gate->Exclude(10s);
    second_timer_at = ++order;
    EXPECT_TRUE(t.drained());
    EXPECT_TRUE(recheck_ended.load());  // the first timer's re-check drained
    std::this_thread::sleep_for(30ms);
  });
  std::this_thread::sleep_for(10ms);  // queued
  std::thread run([&] {
    auto r = gate->Share();
    run_at = ++order;
  });
  std::this_thread::sleep_for(10ms);
  first.Downgrade();  // the first timer's re-check
  EXPECT_EQ(gate->shared_holders(), 1);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(run_at.load(), 0);  // handed on: no run starts before the queued timer
  recheck_ended = true;
  first.Release();
  second_timer.join();
  run.join();
  EXPECT_EQ(second_timer_at.load(), 1);
  EXPECT_EQ(run_at.load(), 2);
}

TEST(DeviceGateTest, AtMostSomeTimersGoInARowBeforeTheRuns) {
  auto gate = DeviceGate::For("test-in-a-row-cap");
  auto always_queued = gate->Queue();
  auto first = gate->Exclude(1s);
  std::atomic<int> timers{1}, timers_before_run{-1};
  std::thread run([&] {
    auto r = gate->Share();
    timers_before_run = timers.load();
  });
  std::this_thread::sleep_for(30ms);
  first.Release();
  for (int i = 0; i < 2 * DeviceGate::kTimersInARow && timers_before_run < 0; ++i) {
    auto t = gate->Exclude(1s);
    ++timers;
  }
  run.join();
  EXPECT_EQ(timers_before_run.load(), DeviceGate::kTimersInARow);
}

TEST(DeviceGateTest, RunsStartWhenTheQueuedTimerGivesUp) {
  auto gate = DeviceGate::For("test-queue-left");
  auto queued = gate->Queue();
  auto first = gate->Exclude(1s);
  std::atomic<bool> run_started{false};
  std::thread run([&] {
    auto r = gate->Share();
    run_started = true;
  });
  std::this_thread::sleep_for(20ms);
  first.Release();
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(run_started.load());  // handed on to the queued timer
  queued.Leave();                    // which did not get the device's lock
  run.join();
  EXPECT_TRUE(run_started.load());
}

TEST(DeviceGateTest, ExclusiveHoldsExcludeEachOther) {
  auto gate = DeviceGate::For("test-two-timers");
  auto first = gate->Exclude(1s);
  std::atomic<bool> second{false};
  std::thread other([&] {
    auto t = gate->Exclude(1s);
    second = true;
  });
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(second.load());
  DeviceGate::Hold moved = std::move(first);  // released by whoever holds it last
  moved.Release();
  other.join();
  EXPECT_TRUE(second.load());
}

}  // namespace
}  // namespace kvault

namespace kvault {
namespace {

// Waits until `n` LeaseMemory calls of `gate` wait (threads started just before).
void AwaitWaitingLeases(DeviceGate& gate, int n) {
  for (int i = 0; i < 20000 && gate.leases_waiting() < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_GE(gate.leases_waiting(), n);
}

TEST(DeviceGateTest, MemoryLeasesWaitUntilTheyFitInTheOrderAsked) {
  using namespace std::chrono_literals;
  auto gate = DeviceGate::For("test-leases");
  DeviceGate::MemoryLease big = gate->LeaseMemory(60, 100);
  DeviceGate::MemoryLease small = gate->LeaseMemory(30, 100);  // fits beside it
  EXPECT_EQ(gate->leased_bytes(), 90);
  EXPECT_FALSE(small.went_ahead());
  std::atomic<int> order{0}, first_at{0}, second_at{0};
  std::thread first([&] {  // does not fit beside the first big one until it is released
    DeviceGate::MemoryLease lease = gate->LeaseMemory(60, 100);
    first_at = ++order;
  });
  AwaitWaitingLeases(*gate, 1);
  std::thread second([&] {  // as large: it could only go ahead by delaying the first
    DeviceGate::MemoryLease lease = gate->LeaseMemory(60, 100);
    second_at = ++order;
  });
  AwaitWaitingLeases(*gate, 2);
  EXPECT_EQ(order.load(), 0);
  big.Release();
  first.join();
  second.join();
  EXPECT_EQ(first_at.load(), 1);
  EXPECT_EQ(second_at.load(), 2);
  small.Release();
  EXPECT_EQ(gate->leased_bytes(), 0);
  // Larger than the whole budget: granted when no other lease is held. A small lease
  // (1/8 of the budget) goes ahead of it only while a lease granted before it holds.
  DeviceGate::MemoryLease held = gate->LeaseMemory(10, 100);
  std::atomic<bool> huge_in{false}, mid_in{false}, tiny_in{false};
  std::thread huge([&] {
    DeviceGate::MemoryLease lease = gate->LeaseMemory(500, 100);
    EXPECT_EQ(lease.bytes(), 500);
    huge_in = true;
  });
  AwaitWaitingLeases(*gate, 1);
  std::thread mid([&] {  // 20 is not small: in line
    DeviceGate::MemoryLease lease = gate->LeaseMemory(20, 100);
    EXPECT_FALSE(lease.went_ahead());
    EXPECT_TRUE(huge_in.load());
    mid_in = true;
  });
  AwaitWaitingLeases(*gate, 2);
  DeviceGate::MemoryLease small_ahead = gate->LeaseMemory(12, 100);
  EXPECT_TRUE(small_ahead.went_ahead());
  held.Release();  // the huge one waits for the small one now, and no other goes ahead
  std::thread tiny([&] {
    DeviceGate::MemoryLease lease = gate->LeaseMemory(1, 100);
    EXPECT_FALSE(lease.went_ahead());
    EXPECT_TRUE(huge_in.load());
    tiny_in = true;
  });
  AwaitWaitingLeases(*gate, 3);
  EXPECT_FALSE(huge_in.load());
  EXPECT_FALSE(mid_in.load());
  EXPECT_FALSE(tiny_in.load());
  small_ahead.Release();
  huge.join();
  mid.join();
  tiny.join();
  EXPECT_EQ(gate->leased_bytes(), 0);
}

// Head-of-line blocking without delay: while the first lease in line waits for room,
// a later one that fits goes ahead if the first would still fit beside every lease that
// went ahead of it; one that would not waits its turn.
TEST(DeviceGateTest, ALeaseGoesAheadOnlyWhereTheFirstInLineStillFits) {
  using namespace std::chrono_literals;
  auto gate = DeviceGate::For("test-leases-ahead");
  DeviceGate::MemoryLease big = gate->LeaseMemory(50, 100);
  std::atomic<bool> first_in{false}, late_in{false}, late_ahead{false}, late_done{false};
  std::thread first([&] {  // 50 + 60 > 100: waits for the big one
    DeviceGate::MemoryLease lease = gate->LeaseMemory(60, 100);
    first_in = true;
    while (!late_done) std::this_thread::sleep_for(1ms);
  });
  AwaitWaitingLeases(*gate, 1);
  // 30 fits now, and 30 + 60 fit once the big one ends: it goes ahead at once.
  DeviceGate::MemoryLease ahead = gate->LeaseMemory(30, 100);
  EXPECT_TRUE(ahead.went_ahead());
  EXPECT_EQ(gate->leased_bytes(), 80);
  std::thread late([&] {  // 15 fits now, but 30 + 15 + 60 would not: it waits
    DeviceGate::MemoryLease lease = gate->LeaseMemory(15, 100);
    late_ahead = lease.went_ahead();
    late_in = true;
    while (!first_in) std::this_thread::sleep_for(1ms);
    late_done = true;
  });
  AwaitWaitingLeases(*gate, 2);
  EXPECT_FALSE(first_in.load());
  EXPECT_FALSE(late_in.load());
  ahead.Release();  // 15 + 60 fit once the big one ends: now the late one goes ahead
  for (int i = 0; i < 5000 && !late_in; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_TRUE(late_in.load());
  EXPECT_TRUE(late_ahead.load());
  EXPECT_FALSE(first_in.load());
  big.Release();  // the first fits beside the late one
  first.join();
  late.join();
  EXPECT_TRUE(first_in.load());
  EXPECT_EQ(gate->leased_bytes(), 0);
  // In line again: the next lease is served in order, nothing went ahead of it.
  DeviceGate::MemoryLease next = gate->LeaseMemory(100, 100);
  EXPECT_FALSE(next.went_ahead());
}

// A stage that ran out of memory beside other lanes runs again with the device's memory
// to itself: it waits for the other leases, and later leases wait for it.
TEST(DeviceGateTest, AWholeLeaseWaitsForTheOthersAndHoldsBackLaterOnes) {
  using namespace std::chrono_literals;
  auto gate = DeviceGate::For("test-whole");
  DeviceGate::MemoryLease other = gate->LeaseMemory(40, 100);
  DeviceGate::MemoryLease mine = gate->LeaseMemory(30, 100);
  std::atomic<bool> whole{false}, later{false};
  std::thread judge([&] { whole = gate->LeaseWhole(mine, 5s); });
  // Its own lease is given up while it waits.
  for (int i = 0; i < 5000 && gate->whole_waiting() == 0; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(gate->leased_bytes(), 40);
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(whole.load());
  // Asked after the whole: waits for it, though 10 bytes fit.
  std::thread late([&] {
    DeviceGate::MemoryLease lease = gate->LeaseMemory(10, 100);
    later = true;
  });
  std::this_thread::sleep_for(30ms);
  other.Release();
  judge.join();
  EXPECT_TRUE(whole.load());
  EXPECT_TRUE(mine.whole());
  EXPECT_EQ(mine.bytes(), 30);
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(later.load());  // held back while the whole lease is whole
  mine.Narrow();               // its own 30 bytes again: the late one fits beside it
  late.join();
  EXPECT_TRUE(later.load());
  EXPECT_FALSE(mine.whole());
  EXPECT_EQ(gate->leased_bytes(), 30);
  mine.Release();
  EXPECT_EQ(gate->leased_bytes(), 0);
}

// The whole memory not had in time: the lease is gone, and the leases asked after it
// are served as if it had never asked (its ticket blocks nobody), whether it was next
// in line or behind another lease waiting for room.
TEST(DeviceGateTest, AWholeLeaseThatWaitsTooLongBlocksNoLaterLease) {
  using namespace std::chrono_literals;
  auto gate = DeviceGate::For("test-whole-late");
  DeviceGate::MemoryLease other = gate->LeaseMemory(40, 100);
  DeviceGate::MemoryLease mine = gate->LeaseMemory(30, 100);
  EXPECT_FALSE(gate->LeaseWhole(mine, 50ms));  // next in line
  EXPECT_FALSE(mine.held());
  EXPECT_EQ(gate->leased_bytes(), 40);
  std::atomic<bool> big_in{false}, later{false};
  std::thread big([&] {  // 70 does not fit beside 40: waits ahead of the whole lease
    DeviceGate::MemoryLease lease = gate->LeaseMemory(70, 100);
    big_in = true;
    while (!later) std::this_thread::sleep_for(1ms);
  });
  std::this_thread::sleep_for(30ms);
  std::thread judge([&] {
    DeviceGate::MemoryLease none;
    EXPECT_FALSE(gate->LeaseWhole(none, 50ms));  // behind the big one
  });
  std::this_thread::sleep_for(20ms);
  std::thread late([&] {  // asked after the whole lease
    DeviceGate::MemoryLease lease = gate->LeaseMemory(10, 100);
    later = true;
  });
  judge.join();
  EXPECT_FALSE(big_in.load());
  other.Release();  // the big one fits (the late one may have gone ahead of it)
  late.join();
  big.join();
  EXPECT_TRUE(later.load());
  EXPECT_EQ(gate->leased_bytes(), 0);
  // A whole lease without a lease of its own (a task's description) is released when
  // narrowed.
  DeviceGate::MemoryLease none;
  ASSERT_TRUE(gate->LeaseWhole(none, 1s));
  EXPECT_TRUE(none.held());
  none.Narrow();
  EXPECT_FALSE(none.held());
  DeviceGate::MemoryLease next = gate->LeaseMemory(100, 100);  // nothing left behind
  EXPECT_EQ(gate->leased_bytes(), 100);
}

// Candidate code that runs before its verification's lease (load_inline calls noted)
// attends: granted at once past leases waiting for room, waited for by a whole lease,
// and held back while one is waited for or held.
TEST(DeviceGateTest, AttendingIsWaitedForByAWholeLeaseAndWaitsForIt) {
  using namespace std::chrono_literals;
  auto gate = DeviceGate::For("test-attend");
  DeviceGate::MemoryLease big = gate->LeaseMemory(90, 100);
  std::thread waiting([&] { DeviceGate::MemoryLease lease = gate->LeaseMemory(50, 100); });
  std::this_thread::sleep_for(20ms);
  DeviceGate::MemoryLease noting = gate->Attend();  // not behind the lease waiting for room
  EXPECT_EQ(noting.bytes(), 0);
  big.Release();
  waiting.join();
  std::atomic<bool> whole{false}, attended{false};
  DeviceGate::MemoryLease mine;
  std::thread judge([&] { whole = gate->LeaseWhole(mine, 5s); });
  for (int i = 0; i < 5000 && gate->whole_waiting() == 0; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(gate->whole_waiting(), 1);
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(whole.load());  // the noting still runs
  std::thread later([&] {      // asked while the whole lease waits: after it
    DeviceGate::MemoryLease lease = gate->Attend();
    attended = true;
  });
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(attended.load());
  noting.Release();
  judge.join();
  EXPECT_TRUE(whole.load());
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(attended.load());  // held back while the whole lease is held
  mine.Narrow();
  later.join();
  EXPECT_TRUE(attended.load());
  EXPECT_EQ(gate->leased_bytes(), 0);
}

// The budget leaves every lane's residue (workers' contexts and keeps, outside any
// lease) and a margin: six lanes on an 80 GB H100 lease far less than the 75% that
// ran out of memory, and what they lease and keep together fits the device.
TEST(DeviceGateTest, TheLeasableMemoryLeavesEachLanesResidue) {
  const int64_t h100 = int64_t{85'017'772'032};  // 79.18 GiB
  const int64_t residue = DeviceGate::LaneResidueBytes(h100);
  EXPECT_GE(residue, int64_t{6} << 30);  // three contexts, 2 GiB of cache, 2 of buffers, 1 of sides
  EXPECT_EQ(DeviceGate::LeasableBytes(h100, 5) - DeviceGate::LeasableBytes(h100, 6), residue);
  const int64_t six = DeviceGate::LeasableBytes(h100, 6);
  EXPECT_LE(six + 6 * residue, h100 - h100 / 16);
  EXPECT_LT(six, h100 / 2);
  // A smaller device's workers keep less (KEEP_CACHED_SHARE), and many lanes still lease
  // an eighth of it.
  EXPECT_LT(DeviceGate::LaneResidueBytes(int64_t{16} << 30), residue);
  EXPECT_EQ(DeviceGate::LeasableBytes(h100, 16), h100 / 8);
  EXPECT_EQ(DeviceGate::LeasableBytes(h100, 0), DeviceGate::LeasableBytes(h100, 1));
}

TEST(DeviceGateTest, MembersCountTheLanesAliveOnTheDevice) {
  auto gate = DeviceGate::For("test-members");
  EXPECT_EQ(gate->members(), 0);
  {
    DeviceGate::Member a = gate->Join();
    DeviceGate::Member b = gate->Join();
    EXPECT_EQ(gate->members(), 2);
    DeviceGate::Member moved = std::move(b);
    EXPECT_EQ(gate->members(), 2);
  }
  EXPECT_EQ(gate->members(), 0);
}

}  // namespace
}  // namespace kvault
