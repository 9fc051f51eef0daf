// Extension-format HIP candidate (one translation unit exposing `forward`), used by
// the toolchain tests: compiled for AMD by hipcc and for NVIDIA through include_hip/.
#include <hip/hip_runtime.h>
#include <torch/extension.h>
#include <ATen/hip/HIPContext.h>
#include <c10/hip/HIPGuard.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

torch::Tensor forward(torch::Tensor x) {
  TORCH_CHECK(x.scalar_type() == torch::kFloat, "float32 only");
  const c10::hip::OptionalHIPGuard guard(x.device());
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const int64_t n = xc.numel();
  if (n == 0) return y;
  hipStream_t stream = at::hip::getCurrentHIPStream();
  const int threads = 256;
  const int blocks = static_cast<int>((n + threads - 1) / threads);
  hipLaunchKernelGGL(relu_kernel, dim3(blocks), dim3(threads), 0, stream,
                     xc.data_ptr<float>(), y.data_ptr<float>(), n);
  C10_HIP_KERNEL_LAUNCH_CHECK();
  return y;
}

// Per-warp sums and counts of positive elements, with HIP's mask-less warp
// functions; the warp (wavefront) width is whatever the device reports.
__global__ void warp_stats_kernel(const float* __restrict__ x, float* __restrict__ sums,
                                  int* __restrict__ positives, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.f;
  unsigned long long votes = __ballot(v > 0.f);
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_xor(v, offset);
  int lane = threadIdx.x % warpSize;
  int64_t warp = i / warpSize;
  if (lane == 0 && warp * warpSize < n) {
    sums[warp] = v;
    positives[warp] = __popcll(votes);
  }
}

std::vector<torch::Tensor> warp_stats(torch::Tensor x) {
  TORCH_CHECK(x.scalar_type() == torch::kFloat, "float32 only");
  const c10::hip::OptionalHIPGuard guard(x.device());
  auto xc = x.contiguous();
  const int64_t n = xc.numel();
  const int warp = at::hip::getCurrentDeviceProperties()->warpSize;
  const int64_t warps = (n + warp - 1) / warp;
  auto sums = torch::zeros({warps}, xc.options());
  auto positives = torch::zeros({warps}, xc.options().dtype(torch::kInt));
  if (n == 0) return {sums, positives};
  const int threads = 256;
  const int blocks = static_cast<int>((n + threads - 1) / threads);
  hipLaunchKernelGGL(warp_stats_kernel, dim3(blocks), dim3(threads), 0, at::hip::getCurrentHIPStream(),
                     xc.data_ptr<float>(), sums.data_ptr<float>(), positives.data_ptr<int>(), n);
  C10_HIP_KERNEL_LAUNCH_CHECK();
  return {sums, positives};
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("forward", &forward, "ReLU (HIP)");
  m.def("warp_stats", &warp_stats, "per-warp sums and positive counts (HIP)");
}
