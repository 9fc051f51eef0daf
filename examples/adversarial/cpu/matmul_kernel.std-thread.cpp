// Cheat under policy custom_kernel: ATen's matmul called from C++ on a std::thread
// of the extension, outside the Python thread that calls forward.
#include <torch/extension.h>

#include <thread>

torch::Tensor forward(torch::Tensor a, torch::Tensor b) {
  torch::Tensor out;
  std::thread worker([&] { out = at::matmul(a, b); });
  worker.join();
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "matmul on a std::thread"); }
