#pragma once
// The lite extension build's at::parallel_for (docs/toolchains.md, "The lite extension
// build"): the candidate's range function handed to PyTorch's own at::parallel_for in
// lite.cc. Whether it runs on several threads is decided as in a full build, where
// PyTorch's inline code runs OpenMP's threads only in a unit compiled with -fopenmp:
// lite.cc is compiled with the candidate's -fopenmp when it has one (a flag that is not
// unit-local, toolchain/flags.h), and without it runs the range in one call.
#include <cstdint>

namespace kvault_lite {

using RangeBody = void (*)(const void* f, int64_t begin, int64_t end);
void ParallelFor(int64_t begin, int64_t end, int64_t grain_size, const void* f, RangeBody body);

// at::parallel_for(begin, end, grain_size, f): f(b, e) over sub-ranges covering
// [begin, end).
template <class F>
void parallel_for(int64_t begin, int64_t end, int64_t grain_size, const F& f) {
  ParallelFor(begin, end, grain_size, &f,
              [](const void* p, int64_t b, int64_t e) { (*static_cast<const F*>(p))(b, e); });
}
int get_num_threads();
int get_thread_num();
bool in_parallel_region();

}  // namespace kvault_lite
