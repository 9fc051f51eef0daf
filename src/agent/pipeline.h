#pragma once
// The generation modes (`kvault gen --mode`, docs/agent.md, "Pipelines"):
//   torch2kernel   PyTorch task -> one candidate file in the chosen format; the
//                  extracted code is the candidate.
//   kernel2kernel  baseline kernel -> faster kernel: an answer holding a whole
//                  translation unit (it has PYBIND11_MODULE) replaces the baseline;
//                  otherwise it must be one `__global__` function, spliced into the
//                  baseline in place of the kernel of that name (renamed back).
//   modu2func      nn.Module task -> functional twin (`module_fn` plus a `Model`
//                  whose forward takes `fn=module_fn`); verified as a KernelBench
//                  candidate `class ModelNew(Model)` against the task.
#include <memory>
#include <string>
#include <vector>

#include "agent/loop.h"

namespace kvault::agent {

extern const std::vector<std::string> kModes;  // torch2kernel, kernel2kernel, modu2func

// Error for an unknown mode, or kernel2kernel without a baseline.
Result<std::unique_ptr<Pipeline>> MakePipeline(const std::string& mode, std::string baseline_source);

}  // namespace kvault::agent
