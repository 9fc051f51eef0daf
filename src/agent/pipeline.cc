#include "agent/pipeline.h"

#include "agent/splice.h"

namespace kvault::agent {
namespace {

class TorchToKernel : public Pipeline {
 public:
  std::string mode() const override { return "torch2kernel"; }
  Result<std::string> CandidateSource(const std::string& code) const override { return code; }
};

class KernelToKernel : public Pipeline {
 public:
  explicit KernelToKernel(std::string baseline) : baseline_(std::move(baseline)) {}
  std::string mode() const override { return "kernel2kernel"; }
  std::string baseline() const override { return baseline_; }
  Result<std::string> CandidateSource(const std::string& code) const override {
    if (code.find("PYBIND11_MODULE") != std::string::npos) return code;  // a whole TU
    return SpliceKernel(baseline_, code);
  }

 private:
  std::string baseline_;
};

class ModuleToFunctional : public Pipeline {
 public:
  std::string mode() const override { return "modu2func"; }
  Result<std::string> CandidateSource(const std::string& code) const override {
    if (code.find("def module_fn") == std::string::npos)
      return Error{"the answer must define `def module_fn(...)` (the functional twin)"};
    if (code.find("class Model") == std::string::npos)
      return Error{"the answer must define `class Model(nn.Module)` whose forward takes fn=module_fn"};
    if (code.find("ModelNew") != std::string::npos)
      return Error{"do not define ModelNew; define module_fn and Model only"};
    return code +
           "\n\n# Appended by kvault gen (modu2func): the twin is verified against the task.\n"
           "class ModelNew(Model):\n    pass\n";
  }
};

}  // namespace

const std::vector<std::string> kModes = {"torch2kernel", "kernel2kernel", "modu2func"};

Result<std::unique_ptr<Pipeline>> MakePipeline(const std::string& mode, std::string baseline_source) {
  if (mode == "torch2kernel") return std::unique_ptr<Pipeline>(new TorchToKernel());
  if (mode == "modu2func") return std::unique_ptr<Pipeline>(new ModuleToFunctional());
  if (mode == "kernel2kernel") {
    if (baseline_source.empty()) return Error{"kernel2kernel needs a baseline kernel for the task"};
    return std::unique_ptr<Pipeline>(new KernelToKernel(std::move(baseline_source)));
  }
  return Error{"unknown mode '" + mode + "' (torch2kernel | kernel2kernel | modu2func)"};
}

}  // namespace kvault::agent
