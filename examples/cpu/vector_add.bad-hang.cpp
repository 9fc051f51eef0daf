// BAD on purpose (suite/vector_add.py): never returns (an endless loop with a volatile
// side effect, which the compiler may not remove), so the outcome is timeout.
#include <cstdint>
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor a, torch::Tensor b) {
  volatile uint64_t spins = 0;
  for (;;) spins = spins + 1;
  return a + b;  // not reached
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "vector_add (hangs)"); }
