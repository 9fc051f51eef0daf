// BAD on purpose (suite/relu.py): asks the GPU allocator for 2^45 floats (128 TiB),
// more than any GPU has. PyTorch raises its out-of-memory error (torch.OutOfMemoryError,
// "CUDA/HIP out of memory. Tried to allocate 128.00 TiB"), so the outcome is oom.
#include <hip/hip_runtime.h>
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor x) {
  auto huge = torch::empty({int64_t{1} << 45}, x.options());
  return huge.narrow(0, 0, x.numel()).view(x.sizes());
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "relu (out of memory)"); }
