// Correct HIP solution for suite/conv2d.py (functional twin: x, weight, bias):
// direct NCHW convolution, stride 1, padding kernel_size / 2, plus bias; one thread per
// output element (grid-stride).
#include <hip/hip_runtime.h>
#include <torch/extension.h>
#include <c10/core/DeviceGuard.h>
// Launch on PyTorch's current stream: at::hip on ROCm builds of PyTorch, at::cuda when
// built for NVIDIA through HIP portability headers, the null stream otherwise.
#if __has_include(<ATen/hip/HIPContext.h>)
#include <ATen/hip/HIPContext.h>
#define KV_CURRENT_STREAM() at::hip::getCurrentHIPStream()
#elif !defined(__HIP_PLATFORM_AMD__) && !defined(__HIP_PLATFORM_HCC__) && \
    __has_include(<ATen/cuda/CUDAContext.h>)
#include <ATen/cuda/CUDAContext.h>
#define KV_CURRENT_STREAM() at::cuda::getCurrentCUDAStream()
#else
#define KV_CURRENT_STREAM() hipStream_t(nullptr)
#endif

static inline void kv_check_launch(const char* what) {
  const hipError_t err = hipGetLastError();
  TORCH_CHECK(err == hipSuccess, what, ": kernel launch failed: ", hipGetErrorString(err));
}

constexpr int kThreads = 256;

__global__ void conv2d_kernel(const float* __restrict__ x, const float* __restrict__ w,
                              const float* __restrict__ bias, float* __restrict__ y,
                              int64_t batch, int64_t chans, int64_t height, int64_t width,
                              int64_t outs, int64_t kh, int64_t kw, int64_t pad,
                              int64_t out_h, int64_t out_w) {
  const int64_t total = batch * outs * out_h * out_w;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += stride) {
    const int64_t ow = idx % out_w;
    const int64_t oh = (idx / out_w) % out_h;
    const int64_t o = (idx / (out_w * out_h)) % outs;
    const int64_t n = idx / (out_w * out_h * outs);
    float acc = bias[o];
    for (int64_t c = 0; c < chans; ++c) {
      const float* x_plane = x + (n * chans + c) * height * width;
      const float* w_plane = w + (o * chans + c) * kh * kw;
      for (int64_t i = 0; i < kh; ++i) {
        const int64_t ih = oh + i - pad;
        if (ih < 0 || ih >= height) continue;
        for (int64_t j = 0; j < kw; ++j) {
          const int64_t iw = ow + j - pad;
          if (iw < 0 || iw >= width) continue;
          acc += x_plane[ih * width + iw] * w_plane[i * kw + j];
        }
      }
    }
    y[idx] = acc;
  }
}

torch::Tensor forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
  TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "conv2d: GPU tensors expected");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32 &&
                  bias.scalar_type() == torch::kFloat32,
              "conv2d: float32 expected");
  TORCH_CHECK(x.dim() == 4 && weight.dim() == 4 && x.size(1) == weight.size(1),
              "conv2d: x [N, C, H, W] and weight [O, C, KH, KW] expected");
  const c10::DeviceGuard device_guard(x.device());
  const auto xc = x.contiguous();
  const auto wc = weight.contiguous();
  const auto bc = bias.contiguous();
  const int64_t batch = xc.size(0), chans = xc.size(1), height = xc.size(2), width = xc.size(3);
  const int64_t outs = wc.size(0), kh = wc.size(2), kw = wc.size(3);
  TORCH_CHECK(bc.numel() == outs, "conv2d: bias must have one value per output channel");
  const int64_t pad = kw / 2;  // the reference pads both dimensions by weight.shape[-1] // 2
  const int64_t out_h = height + 2 * pad - kh + 1;
  const int64_t out_w = width + 2 * pad - kw + 1;
  TORCH_CHECK(out_h > 0 && out_w > 0, "conv2d: kernel larger than padded input");
  auto out = torch::empty({batch, outs, out_h, out_w}, xc.options());
  const int64_t total = out.numel();
  if (total == 0) return out;
  const int blocks = static_cast<int>(std::min<int64_t>((total + kThreads - 1) / kThreads, 4096));
  hipStream_t stream = KV_CURRENT_STREAM();
  hipLaunchKernelGGL(conv2d_kernel, dim3(blocks), dim3(kThreads), 0, stream, xc.data_ptr<float>(),
                     wc.data_ptr<float>(), bc.data_ptr<float>(), out.data_ptr<float>(), batch,
                     chans, height, width, outs, kh, kw, pad, out_h, out_w);
  kv_check_launch("conv2d");
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "conv2d (HIP)"); }
