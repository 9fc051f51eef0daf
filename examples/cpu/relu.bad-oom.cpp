// BAD on purpose (suite/relu.py): asks for an output buffer of 2^55 floats (128 PiB),
// more than any 64-bit address space holds, so the allocation fails at once whatever the
// host's overcommit setting, with PyTorch's "DefaultCPUAllocator: can't allocate memory"
// (newer releases: "not enough memory") error: the outcome is oom.
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor x) {
  auto huge = torch::empty({int64_t{1} << 55}, x.options());
  return huge.narrow(0, 0, x.numel()).view(x.sizes());
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "relu (out of memory)"); }
