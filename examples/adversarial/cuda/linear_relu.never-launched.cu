// Cheat under the fused policy: a fused kernel of its own is defined (the source
// names one) but never launched; ATen computes the whole answer.
#include <torch/extension.h>

__global__ void fused_bias_relu(float* out, const float* bias, int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x)
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) out[r * cols + c] = fmaxf(out[r * cols + c] + bias[c], 0.f);
}

torch::Tensor forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
  return at::relu(at::addmm(bias, x, weight.t()));
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "own kernel never launched"); }
