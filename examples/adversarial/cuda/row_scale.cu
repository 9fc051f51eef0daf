// Honest control: a grid-stride loop, so any size (the held-out cases, smaller and
// larger) is covered whatever the grid.
#include <ATen/cuda/CUDAContext.h>
#include <torch/extension.h>

__global__ void row_scale_kernel(const float* x, float* y, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = tanhf(x[i]) * 2.0f + 1.0f;
}

torch::Tensor forward(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const int64_t n = xc.numel();
  const int blocks = static_cast<int>(std::min<int64_t>((n + 255) / 256, 4096));
  if (n > 0)
    row_scale_kernel<<<blocks, 256, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(),
                                                                         y.data_ptr<float>(), n);
  return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "row scale"); }
