// Sample HIP source exercising the HIP API surface that KernelVault's HIP-on-NVIDIA
// portability layer (include_hip/) covers. Compiled (never run) by toolchain tests.
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#if __has_include(<hip/hip_bf16.h>)  // ROCm 5.7+; not in Debian's HIP 5.2
#include <hip/hip_bf16.h>
#define SAMPLE_HAS_HIP_BF16 1
#endif
#include <hip/hip_bfloat16.h>
#include <hip/hip_cooperative_groups.h>
#include <hip/hip_complex.h>

#include <cstdio>

namespace cg = cooperative_groups;

#define HIP_CHECK(expr)                                                         \
  do {                                                                          \
    hipError_t err_ = (expr);                                                   \
    if (err_ != hipSuccess) {                                                   \
      std::fprintf(stderr, "%s: %s\n", #expr, hipGetErrorString(err_));         \
      return err_;                                                              \
    }                                                                           \
  } while (0)

__device__ __forceinline__ float WarpSum(float v) {
  for (int offset = warpSize / 2; offset > 0; offset >>= 1) v += __shfl_down(v, offset);
  return v;
}

__global__ void __launch_bounds__(256) ReduceSum(const float* __restrict__ x, float* out, int n) {
  __shared__ float partial[32];
  int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
  float v = i < n ? __ldg(&x[i]) : 0.f;
  v = WarpSum(v);
  int lane = threadIdx.x % warpSize;
  int warp = threadIdx.x / warpSize;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (blockDim.x + warpSize - 1) / warpSize ? partial[lane] : 0.f;
    v = WarpSum(v);
    if (lane == 0) atomicAdd(out, v);
  }
}

__global__ void ShuffleVariety(int* out) {
  int lane = static_cast<int>(__lane_id());
  int a = __shfl(lane, 0);
  int b = __shfl_up(lane, 1, 16);
  int c = __shfl_xor(lane, 1);
  double d = __shfl_down(static_cast<double>(lane), 2);
  unsigned long long mask = __ballot(lane & 1);
  int any = __any(lane == 3);
  int all = __all(lane >= 0);
  out[threadIdx.x] = a + b + c + static_cast<int>(d) + __popcll(mask) + any + all;
}

__global__ void DynamicShared(const float* x, float* y, int n) {
  HIP_DYNAMIC_SHARED(float, tile)
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? x[i] : 0.f;
  __syncthreads();
  if (i < n) y[i] = __expf(tile[threadIdx.x]) * rsqrtf(1.f + __fdividef(tile[threadIdx.x], 3.f));
}

__global__ void HalfAndBf16(const __half* h, const hip_bfloat16* ob, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half2 h2 = __halves2half2(h[i], h[i]);
  __half s = __hadd(__low2half(h2), __high2half(h2));
  float f = __half2float(s) + static_cast<float>(ob[i]);
  hip_bfloat16 r(f);
  out[i] = f + __half2float(__float2half(f)) + static_cast<float>(r);
}

#ifdef SAMPLE_HAS_HIP_BF16
__global__ void Bf16(const __hip_bfloat16* b, float* out) {
  float f = __bfloat162float(b[threadIdx.x]);
  out[threadIdx.x] = __bfloat162float(__float2bfloat16(f * 2.f));
}
#endif

__global__ void TiledGroups(float* data) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  float v = data[block.thread_rank()];
  for (int o = tile.size() / 2; o > 0; o /= 2) v += tile.shfl_down(v, o);
  block.sync();
  if (tile.thread_rank() == 0) data[block.thread_rank()] = v;
}

template <typename T, int kVec>
__global__ void Scale(T* x, T s, int n) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * kVec;
#pragma unroll
  for (int k = 0; k < kVec; ++k)
    if (i + k < n) x[i + k] *= s;
}

__global__ void ComplexMul(const hipFloatComplex* a, const hipFloatComplex* b, hipFloatComplex* c) {
  int i = threadIdx.x;
  c[i] = hipCmulf(a[i], b[i]);
}

__global__ void NoArgs() {}

hipError_t RunAll(int n, hipStream_t stream) {
  hipDeviceProp_t prop;
  HIP_CHECK(hipGetDeviceProperties(&prop, 0));
  std::printf("%s %s SMs=%d warp=%d smem=%zu maxThreads=%d clock=%d kHz\n", prop.name,
              prop.gcnArchName, prop.multiProcessorCount, prop.warpSize,
              prop.sharedMemPerBlock, prop.maxThreadsPerBlock, prop.clockRate);
  float* x = nullptr;
  float* y = nullptr;
  HIP_CHECK(hipMalloc(&x, n * sizeof(float)));
  HIP_CHECK(hipMalloc(reinterpret_cast<void**>(&y), n * sizeof(float)));
  float* host = nullptr;
  HIP_CHECK(hipHostMalloc(&host, n * sizeof(float), hipHostMallocDefault));
  HIP_CHECK(hipMemset(y, 0, sizeof(float)));
  HIP_CHECK(hipMemcpyAsync(x, host, n * sizeof(float), hipMemcpyHostToDevice, stream));

  hipEvent_t start, stop;
  HIP_CHECK(hipEventCreate(&start));
  HIP_CHECK(hipEventCreateWithFlags(&stop, hipEventDefault));
  HIP_CHECK(hipEventRecord(start, stream));
  dim3 block(256), grid((n + 255) / 256);
  hipLaunchKernelGGL(ReduceSum, grid, block, 0, stream, x, y, n);
  hipLaunchKernelGGL(DynamicShared, grid, block, 256 * sizeof(float), stream, x, y, n);
  hipLaunchKernelGGL(HIP_KERNEL_NAME(Scale<float, 4>), dim3((n + 1023) / 1024), dim3(256), 0,
                     stream, x, 2.0f, n);
  hipLaunchKernelGGL(NoArgs, dim3(1), dim3(1), 0, 0);
  ShuffleVariety<<<1, 64, 0, stream>>>(reinterpret_cast<int*>(y));
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipEventRecord(stop, stream));
  HIP_CHECK(hipEventSynchronize(stop));
  float ms = 0;
  HIP_CHECK(hipEventElapsedTime(&ms, start, stop));
  HIP_CHECK(hipMemcpy(host, y, sizeof(float), hipMemcpyDeviceToHost));
  HIP_CHECK(hipStreamSynchronize(stream));
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipEventDestroy(start));
  HIP_CHECK(hipEventDestroy(stop));
  HIP_CHECK(hipHostFree(host));
  HIP_CHECK(hipFree(x));
  HIP_CHECK(hipFree(y));
  return hipSuccess;
}
