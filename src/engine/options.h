#pragma once
// Settings of one verification. Every field has a default that works on the CPU
// backend; the CLI fills them from flags and the environment (docs/cli.md).
#include <chrono>
#include <string>

#include "reward/reward.h"
#include "toolchain/backend.h"

namespace kvault {

using std::chrono::milliseconds;

struct StageTimeouts {
  milliseconds compile{300'000};  // Default: 5 min (cold PyTorch headers are slow)
  milliseconds start{120'000};    // worker start + hello (importing torch)
  milliseconds describe{60'000};
  milliseconds reference{120'000};
  milliseconds load{300'000};     // KernelBench candidates may compile inline sources here
  milliseconds run{60'000};       // one case and seed
  milliseconds time{300'000};     // all performance cases
};

struct TimingSettings {
  int warmup_ms = 30;
  int min_samples = 10;
  int max_samples = 100;
  int max_ms = 2000;  // per case, both sides together
  bool flush = true;
};

struct EngineOptions {
  Backend backend = Backend::kCpu;
  std::string arch;             // "" = the device's own
  bool compile_only = false;
  std::string python = "python3";  // $KVAULT_PYTHON
  std::string source_root;      // where python/ and include_hip/ live
  std::string cache_dir;        // $KVAULT_CACHE_DIR
  int device_index = 0;
  RewardKind reward = RewardKind::kPaper;
  StageTimeouts timeouts;
  TimingSettings timing;
  bool skip_timing = false;     // correctness only
};

}  // namespace kvault
