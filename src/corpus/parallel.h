#pragma once
// ParallelFor: runs body(i) for i in [0, n) on up to `threads` std::threads (0: one per
// hardware thread), handing out indices from a shared counter. Returns when all are
// done. `body` must be safe to call concurrently for distinct indices.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace kvault::corpus {

inline int ThreadCount(int requested) {
  if (requested > 0) return requested;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

template <class Body>
void ParallelFor(size_t n, int threads, Body body) {
  size_t workers = std::min<size_t>(static_cast<size_t>(ThreadCount(threads)), n);
  if (workers <= 1) {
    for (size_t i = 0; i < n; ++i) body(i);
    return;
  }
  std::atomic<size_t> next{0};
  auto run = [&] {
    for (size_t i = next++; i < n; i = next++) body(i);
  };
  std::vector<std::thread> pool;
  for (size_t w = 1; w < workers; ++w) pool.emplace_back(run);
  run();
  for (auto& t : pool) t.join();
}

}  // namespace kvault::corpus
