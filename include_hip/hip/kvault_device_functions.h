#pragma once
// KernelVault HIP-on-NVIDIA portability layer: HIP device-side names on CUDA.
// Included by <hip/hip_runtime.h> when compiling with nvcc; not a HIP header.
//
// Warp semantics: HIP's mask-less warp functions act on the whole wavefront. Here
// they act on the whole 32-thread warp (full mask 0xffffffff). __ballot returns a
// 64-bit value as in HIP, with the upper 32 bits zero. Code that assumes 64 lanes
// computes wrong results on NVIDIA; that is the kernel's problem, not this layer's.
#include <utility>

// libcu++ declares a constructor named __any(...); include it before the __any macro
// below exists, so that later includes of Thrust/CUB/libcu++ are unaffected.
#if __has_include(<cuda/std/__functional/invoke.h>)
#include <cuda/std/__functional/invoke.h>
#endif

#if defined(__CUDA_ARCH__)
#define __HIP_DEVICE_COMPILE__ 1
#endif

#define hipThreadIdx_x threadIdx.x
#define hipThreadIdx_y threadIdx.y
#define hipThreadIdx_z threadIdx.z
#define hipBlockIdx_x blockIdx.x
#define hipBlockIdx_y blockIdx.y
#define hipBlockIdx_z blockIdx.z
#define hipBlockDim_x blockDim.x
#define hipBlockDim_y blockDim.y
#define hipBlockDim_z blockDim.z
#define hipGridDim_x gridDim.x
#define hipGridDim_y gridDim.y
#define hipGridDim_z gridDim.z

#define HIP_KERNEL_NAME(...) __VA_ARGS__
#define HIP_DYNAMIC_SHARED(type, var) extern __shared__ type var[];
#define HIP_DYNAMIC_SHARED_ATTRIBUTE

namespace kvault_hip {

constexpr unsigned kFullMask = 0xffffffffu;

template <class T>
__device__ __forceinline__ T shfl(T var, int src_lane, int width = warpSize) {
  return __shfl_sync(kFullMask, var, src_lane, width);
}
template <class T>
__device__ __forceinline__ T shfl_up(T var, unsigned int delta, int width = warpSize) {
  return __shfl_up_sync(kFullMask, var, delta, width);
}
template <class T>
__device__ __forceinline__ T shfl_down(T var, unsigned int delta, int width = warpSize) {
  return __shfl_down_sync(kFullMask, var, delta, width);
}
template <class T>
__device__ __forceinline__ T shfl_xor(T var, int lane_mask, int width = warpSize) {
  return __shfl_xor_sync(kFullMask, var, lane_mask, width);
}
__device__ __forceinline__ unsigned long long ballot(int predicate) {
  return static_cast<unsigned long long>(__ballot_sync(kFullMask, predicate));
}
__device__ __forceinline__ int any(int predicate) { return __any_sync(kFullMask, predicate); }
__device__ __forceinline__ int all(int predicate) { return __all_sync(kFullMask, predicate); }

// Launches `kernel` like HIP's hipLaunchKernelGGL; arguments convert to the kernel's
// parameter types as in a <<<...>>> launch.
template <class... Params, class... Args>
inline void LaunchKernelGGL(void (*kernel)(Params...), dim3 grid, dim3 block,
                            unsigned int shared_bytes, cudaStream_t stream, Args&&... args) {
  kernel<<<grid, block, shared_bytes, stream>>>(std::forward<Args>(args)...);
}

}  // namespace kvault_hip

// Function-like macros, so that CUDA's own deprecated declarations of these names
// (declared earlier by cuda_runtime.h / cuda_fp16.h) are not redefined.
#define __shfl(...) ::kvault_hip::shfl(__VA_ARGS__)
#define __shfl_up(...) ::kvault_hip::shfl_up(__VA_ARGS__)
#define __shfl_down(...) ::kvault_hip::shfl_down(__VA_ARGS__)
#define __shfl_xor(...) ::kvault_hip::shfl_xor(__VA_ARGS__)
#define __ballot(p) ::kvault_hip::ballot(p)
#define __any(p) ::kvault_hip::any(p)
#define __all(p) ::kvault_hip::all(p)
#define hipLaunchKernelGGL(kernel, ...) ::kvault_hip::LaunchKernelGGL(kernel, __VA_ARGS__)

// The lane index within the warp (HIP: within the wavefront).
__device__ __forceinline__ unsigned int __lane_id() {
  unsigned int lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

// HIP's relaxed atomics map to the ordinary ones.
#define unsafeAtomicAdd atomicAdd
#define atomicAddNoRet atomicAdd
