// WRONG on purpose (suite/transpose.py): moves each 32 x 32 tile to its transposed
// place but does not transpose inside the tile (reads tile[k][x] instead of
// tile[x][k]).
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

constexpr int kTile = 32;
constexpr int kRowsPerPass = 8;  // block is kTile x kRowsPerPass threads

__global__ void transpose_kernel(const uint16_t* __restrict__ x, uint16_t* __restrict__ y,
                                 int64_t rows, int64_t cols) {
  __shared__ uint16_t tile[kTile][kTile + 1];
  const int64_t offset = static_cast<int64_t>(blockIdx.z) * rows * cols;
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kTile;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kTile;
  for (int k = threadIdx.y; k < kTile; k += kRowsPerPass) {
    const int64_t r = row0 + k, c = col0 + threadIdx.x;
    if (r < rows && c < cols) tile[k][threadIdx.x] = x[offset + r * cols + c];
  }
  __syncthreads();
  // y is [cols, rows]: its row index is a column of x.
  for (int k = threadIdx.y; k < kTile; k += kRowsPerPass) {
    const int64_t c = col0 + k, r = row0 + threadIdx.x;
    if (c < cols && r < rows) y[offset + c * rows + r] = tile[k][threadIdx.x];  // BUG: indices not swapped
  }
}

torch::Tensor forward(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda(), "transpose: GPU tensor expected");
  TORCH_CHECK(x.scalar_type() == torch::kBFloat16, "transpose: bfloat16 expected");
  TORCH_CHECK(x.dim() >= 2, "transpose: at least two dimensions expected");
  const c10::DeviceGuard device_guard(x.device());
  const auto xc = x.contiguous();
  const int64_t rows = xc.size(-2), cols = xc.size(-1);
  const int64_t batch = rows * cols == 0 ? 0 : xc.numel() / (rows * cols);
  auto out_sizes = xc.sizes().vec();
  std::swap(out_sizes[out_sizes.size() - 1], out_sizes[out_sizes.size() - 2]);
  auto out = torch::empty(out_sizes, xc.options());
  if (batch == 0) return out;
  TORCH_CHECK(batch < 65536 && (rows + kTile - 1) / kTile < 65536, "transpose: input too large");
  const dim3 grid(static_cast<unsigned int>((cols + kTile - 1) / kTile),
                  static_cast<unsigned int>((rows + kTile - 1) / kTile),
                  static_cast<unsigned int>(batch));
  hipStream_t stream = KV_CURRENT_STREAM();
  hipLaunchKernelGGL(transpose_kernel, grid, dim3(kTile, kRowsPerPass), 0, stream,
                     reinterpret_cast<const uint16_t*>(xc.data_ptr<at::BFloat16>()),
                     reinterpret_cast<uint16_t*>(out.data_ptr<at::BFloat16>()), rows, cols);
  kv_check_launch("transpose");
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "transpose bf16 (HIP)"); }
