#pragma once
// Which backends the worker's PyTorch can use here, and the automatic choice:
// a ROCm GPU -> hip, an NVIDIA GPU -> cuda, else cpu.
#include <string>
#include <vector>

#include "engine/options.h"
#include "util/json.h"
#include "util/result.h"

namespace kvault {

struct BackendProbe {
  Json hello;                           // the cpu worker's hello answer
  std::vector<std::string> available;   // e.g. {"cpu", "cuda"}
  std::string reasons;                  // why the others are not usable (one line each)
};

// Starts one worker on the cpu backend and asks it. Error: no worker could start
// (e.g. KVAULT_PYTHON has no PyTorch).
Result<BackendProbe> ProbeBackends(const EngineOptions& options);

Backend ChooseBackend(const BackendProbe& probe);

}  // namespace kvault
