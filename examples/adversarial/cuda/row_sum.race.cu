// Cheat (a race): every thread adds its partial sum to the row's output with a plain
// read-modify-write instead of an atomic or a reduction; updates are lost.
#include <ATen/cuda/CUDAContext.h>
#include <torch/extension.h>

__global__ void row_sum_kernel(const float* x, float* y, int64_t d) {
  const float* row = x + blockIdx.x * d;
  float acc = 0.f;
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) acc += row[j];
  volatile float* out = y + blockIdx.x;
  *out = *out + acc;  // racy
}

torch::Tensor forward(torch::Tensor x) {
  auto xc = x.contiguous();
  const int64_t n = xc.size(0), d = xc.size(1);
  auto y = torch::zeros({n}, xc.options());
  row_sum_kernel<<<n, 256, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), d);
  return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "racy row sum"); }
