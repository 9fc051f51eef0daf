#pragma once
// The Python worker's own device memory bounds, as the engine counts them when it
// sizes memory leases (DeviceGate::LaneResidueBytes, TimingFootprintBytes). Each
// names its twin in python/kvault_worker; python/tests/test_worker_limits.py reads
// both sides as text and fails when a pair disagrees: change both together.
// Keep each value a plain expression of integers, `<<`, `*` and `/`.
#include <cstdint>

namespace kvault::worker_limits {

// What a worker keeps cached between requests, for each of the two things it keeps
// (PyTorch's cache; the reference's hand-over buffers): at most kKeepCachedBytes and
// at most 1/kKeepCachedShare of the device's memory. device.py: KEEP_CACHED_BYTES,
// KEEP_CACHED_SHARE (= 1 / kKeepCachedShare).
inline constexpr int64_t kKeepCachedBytes = int64_t{2} << 30;
inline constexpr int64_t kKeepCachedShare = 32;
// Reference sides kept between candidates, together. session/reference.py: KEEP_BYTES.
inline constexpr int64_t kKeptSidesBytes = int64_t{1} << 30;
// A timed side's flush buffer: 2 x the device's last-level cache, at least
// GPU_MIN_FLUSH_BYTES (timing/flush.py, gpu_flush_bytes). Counted as twice the
// largest last-level cache the worker names (INFINITY_CACHE_BYTES), which is also
// twice its floor; the test checks that it covers both.
inline constexpr int64_t kFlushBufferBytes = int64_t{512} << 20;
// A captured graph's bounds (timing/side.py): its calls (GRAPH_MAX_CALLS), the pool of
// input sets the calls' sets are filled from (POOL_SETS), the pool's and the calls'
// input sets together (GRAPH_INPUT_BYTES, else no graph), its outputs
// (GRAPH_OUTPUT_BYTES).
inline constexpr int64_t kGraphMaxCalls = 1000;
inline constexpr int64_t kGraphPoolSets = 4;
inline constexpr int64_t kGraphInputBytes = int64_t{1} << 30;
inline constexpr int64_t kGraphOutputBytes = int64_t{1} << 30;

}  // namespace kvault::worker_limits
