#pragma once
// How many verification lanes `--jobs` gives eval, gen and corpus verify (docs/cli.md, "--jobs").
//
//   auto lanes = ParseJobs("auto", Backend::kCuda, std::thread::hardware_concurrency());
#include <string>

#include "toolchain/backend.h"
#include "util/result.h"

namespace kvault::cli {

// Lanes per GPU that verified the most candidates a minute on the H200
// (docs/timing.md, "How many lanes"): more only wait for the device's turns.
inline constexpr int kGpuLanesPerDevice = 6;
// CPU cores per lane on the cpu backend: each lane's worker runs PyTorch's own
// threads, and the compile pool builds on the same cores.
inline constexpr unsigned kCoresPerCpuLane = 4;
inline constexpr int kMaxCpuLanes = 8;
inline constexpr int kMaxJobs = 256;

// `--jobs auto`: on a GPU backend kGpuLanesPerDevice lanes (eval and gen use one
// device), never more than the CPU cores; on the cpu backend one lane per
// kCoresPerCpuLane cores, 1 to kMaxCpuLanes. `cpu_cores` 0 (unknown) counts as 1.
int AutoLanes(Backend backend, unsigned cpu_cores);

// "auto", or a whole number from 1 to kMaxJobs; Error saying what is accepted otherwise.
Result<int> ParseJobs(const std::string& text, Backend backend, unsigned cpu_cores);

// The CLI11 check of a --jobs value (no backend is known while parsing): "" when
// `text` is acceptable, else the reason.
std::string CheckJobsText(const std::string& text);

}  // namespace kvault::cli
