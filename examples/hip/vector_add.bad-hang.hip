// BAD on purpose (suite/vector_add.py): the kernel spins until a flag in device memory
// becomes non-zero, and nothing ever sets it, so the call never returns: the outcome is
// timeout (the worker must be killed; that also ends the kernel).
#include <hip/hip_runtime.h>
#include <torch/extension.h>

__global__ void spin_kernel(const volatile int* flag, const float* a, const float* b, float* out,
                            int64_t n) {
  while (*flag == 0) {
  }
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}

torch::Tensor forward(torch::Tensor a, torch::Tensor b) {
  const auto ac = a.contiguous();
  const auto bc = b.contiguous();
  auto out = torch::empty(ac.sizes(), ac.options());
  auto flag = torch::zeros({1}, ac.options().dtype(torch::kInt32));
  const int64_t n = ac.numel();
  const unsigned int blocks = static_cast<unsigned int>((n + 255) / 256);
  hipLaunchKernelGGL(spin_kernel, dim3(blocks), dim3(256), 0, 0, flag.data_ptr<int>(),
                     ac.data_ptr<float>(), bc.data_ptr<float>(), out.data_ptr<float>(), n);
  return out;  // the caller's synchronize waits forever
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "vector_add (hangs)"); }
