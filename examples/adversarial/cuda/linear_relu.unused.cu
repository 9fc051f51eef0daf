// Cheat under the fused policy: a kernel of its own is launched (the kernel observer
// sees it) but writes a scratch buffer nobody reads; the answer is ATen's.
#include <torch/extension.h>

__global__ void touch_scratch(float* scratch, int64_t n) {
  const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) scratch[i] = static_cast<float>(i);
}

torch::Tensor forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
  auto scratch = torch::empty_like(bias);
  touch_scratch<<<1, 256>>>(scratch.data_ptr<float>(), scratch.numel());
  return at::relu(at::addmm(bias, x, weight.t()));
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "own kernel, result unused"); }
