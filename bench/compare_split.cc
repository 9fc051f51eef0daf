// Throughput of the engine's element comparison (src/check/elementwise.h) on one
// thread and split across threads: two 256 MiB float32 buffers that match within
// tolerance (BENCHMARKS.md, "Timing with the device to itself"). Build and run from
// the repository root after a build in build/:
//   g++ -std=c++20 -O2 -I src bench/compare_split.cc build/src/check/libkvault_check.a \
//       -lpthread -o /tmp/compare_split && /tmp/compare_split
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "check/elementwise.h"

using namespace kvault;
int main() {
  const int64_t n = 64 << 20;  // 64 Mi floats = 256 MiB per side
  std::vector<float> a(n), b(n);
  std::mt19937 rng(1);
  std::normal_distribution<float> d;
  for (int64_t i = 0; i < n; ++i) { a[i] = d(rng); b[i] = a[i] * (1 + 1e-6f); }
  ElementRule rule{1e-4, 1e-4, false};
  for (unsigned t : {1u, 2u, 4u, 8u, 1u, 2u, 4u, 8u}) {
    auto t0 = std::chrono::steady_clock::now();
    ElementStats s = CompareElements(DType::kFloat32, reinterpret_cast<const std::byte*>(a.data()),
                                     reinterpret_cast<const std::byte*>(b.data()), n, rule, ElementSplit{t, 32 << 20});
    double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("threads %u: %.3f s, %.2f GB/s of both buffers (mismatched %ld)\n", t, sec, 2.0 * n * 4 / sec / 1e9, (long)s.mismatched);
  }
}
