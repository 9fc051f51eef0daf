#pragma once
// Clocks and temperature of a GPU read with the vendor's tool (nvidia-smi on the
// cuda backend, rocm-smi on hip), for workers without NVML (docs/timing.md,
// "Clocks"). One process spawn per call: call it once per verification, never
// per sample.
#include "toolchain/backend.h"
#include "util/json.h"

namespace kvault {

// {"source": "nvidia-smi", "sm_mhz", "mem_mhz", "temperature_c"} (numbers, or null
// where the tool printed none), or null when the tool is missing or fails.
Json QuerySensorsWithTool(Backend backend, int device_index);

// Parses one line of `nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu
// --format=csv,noheader,nounits`, e.g. "1980, 3201, 41". Null when malformed.
Json ParseNvidiaSmiSensors(const std::string& line);

}  // namespace kvault
