// BAD on purpose (suite/relu.py): stores through a null pointer, killing the worker
// with SIGSEGV, so the outcome is crash. Both the pointer and the store are volatile:
// otherwise GCC 12 at -O2 drops the store to the unknown address entirely.
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor x) {
  volatile float* volatile target = nullptr;
  *target = 1.0f;
  return x;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "relu (segfaults)"); }
