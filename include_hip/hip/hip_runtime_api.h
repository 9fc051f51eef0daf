#pragma once
// KernelVault HIP-on-NVIDIA portability layer: the HIP host runtime API mapped onto
// the CUDA runtime. Written for this project (see docs/hip-on-nvidia.md); used when a
// .hip source is compiled with nvcc for an NVIDIA GPU. Error codes, streams and events
// are CUDA's own values under HIP names.
#ifndef __HIP_PLATFORM_NVIDIA__
#define __HIP_PLATFORM_NVIDIA__ 1
#endif
#ifndef __HIP_PLATFORM_NVCC__
#define __HIP_PLATFORM_NVCC__ 1
#endif
#define KVAULT_HIP_ON_NVIDIA 1

#include <cuda_runtime_api.h>
#include <cstddef>
#include <cstdio>
#include <cstring>

// ---- types --------------------------------------------------------------------
typedef cudaError_t hipError_t;
typedef cudaStream_t hipStream_t;
typedef cudaEvent_t hipEvent_t;
typedef cudaMemcpyKind hipMemcpyKind;
typedef cudaDeviceAttr hipDeviceAttribute_t;
typedef cudaFuncAttribute hipFuncAttribute;
typedef cudaFuncAttributes hipFuncAttributes;
typedef cudaFuncCache hipFuncCache_t;
typedef cudaSharedMemConfig hipSharedMemConfig;
typedef cudaPointerAttributes hipPointerAttribute_t;

// ---- constants ------------------------------------------------------------------
#define hipSuccess cudaSuccess
#define hipErrorInvalidValue cudaErrorInvalidValue
#define hipErrorOutOfMemory cudaErrorMemoryAllocation
#define hipErrorMemoryAllocation cudaErrorMemoryAllocation
#define hipErrorNotReady cudaErrorNotReady
#define hipErrorInvalidDevice cudaErrorInvalidDevice
#define hipErrorNoDevice cudaErrorNoDevice
#define hipErrorInvalidDeviceFunction cudaErrorInvalidDeviceFunction
#define hipErrorInvalidConfiguration cudaErrorInvalidConfiguration
#define hipErrorLaunchFailure cudaErrorLaunchFailure
#define hipErrorLaunchOutOfResources cudaErrorLaunchOutOfResources
#define hipErrorIllegalAddress cudaErrorIllegalAddress
#define hipErrorNotSupported cudaErrorNotSupported
#define hipErrorUnknown cudaErrorUnknown

#define hipMemcpyHostToHost cudaMemcpyHostToHost
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define hipMemcpyDefault cudaMemcpyDefault

#define hipStreamDefault cudaStreamDefault
#define hipStreamNonBlocking cudaStreamNonBlocking
#define hipStreamPerThread cudaStreamPerThread
#define hipEventDefault cudaEventDefault
#define hipEventBlockingSync cudaEventBlockingSync
#define hipEventDisableTiming cudaEventDisableTiming
#define hipHostMallocDefault cudaHostAllocDefault
#define hipHostMallocPortable cudaHostAllocPortable
#define hipHostMallocMapped cudaHostAllocMapped
#define hipMemAttachGlobal cudaMemAttachGlobal

#define hipFuncAttributeMaxDynamicSharedMemorySize cudaFuncAttributeMaxDynamicSharedMemorySize
#define hipFuncAttributePreferredSharedMemoryCarveout cudaFuncAttributePreferredSharedMemoryCarveout
#define hipFuncCachePreferNone cudaFuncCachePreferNone
#define hipFuncCachePreferShared cudaFuncCachePreferShared
#define hipFuncCachePreferL1 cudaFuncCachePreferL1
#define hipFuncCachePreferEqual cudaFuncCachePreferEqual

#define hipDeviceAttributeMaxThreadsPerBlock cudaDevAttrMaxThreadsPerBlock
#define hipDeviceAttributeMaxBlockDimX cudaDevAttrMaxBlockDimX
#define hipDeviceAttributeMaxGridDimX cudaDevAttrMaxGridDimX
#define hipDeviceAttributeMaxSharedMemoryPerBlock cudaDevAttrMaxSharedMemoryPerBlock
#define hipDeviceAttributeSharedMemPerBlockOptin cudaDevAttrMaxSharedMemoryPerBlockOptin
#define hipDeviceAttributeMaxSharedMemoryPerMultiprocessor cudaDevAttrMaxSharedMemoryPerMultiprocessor
#define hipDeviceAttributeWarpSize cudaDevAttrWarpSize
#define hipDeviceAttributeMultiprocessorCount cudaDevAttrMultiProcessorCount
#define hipDeviceAttributeMaxThreadsPerMultiProcessor cudaDevAttrMaxThreadsPerMultiProcessor
#define hipDeviceAttributeClockRate cudaDevAttrClockRate
#define hipDeviceAttributeMemoryClockRate cudaDevAttrMemoryClockRate
#define hipDeviceAttributeL2CacheSize cudaDevAttrL2CacheSize
#define hipDeviceAttributeComputeCapabilityMajor cudaDevAttrComputeCapabilityMajor
#define hipDeviceAttributeComputeCapabilityMinor cudaDevAttrComputeCapabilityMinor

// ---- functions with the same shape in both APIs ------------------------------------
#define hipGetErrorString cudaGetErrorString
#define hipGetErrorName cudaGetErrorName
#define hipGetLastError cudaGetLastError
#define hipPeekAtLastError cudaPeekAtLastError
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipDeviceReset cudaDeviceReset
#define hipGetDevice cudaGetDevice
#define hipSetDevice cudaSetDevice
#define hipGetDeviceCount cudaGetDeviceCount
#define hipDeviceGetAttribute cudaDeviceGetAttribute
#define hipDeviceGetStreamPriorityRange cudaDeviceGetStreamPriorityRange
#define hipMemGetInfo cudaMemGetInfo
#define hipPointerGetAttributes cudaPointerGetAttributes

#define hipMalloc cudaMalloc
#define hipMallocManaged cudaMallocManaged
#define hipMallocAsync cudaMallocAsync
#define hipFree cudaFree
#define hipFreeAsync cudaFreeAsync
#define hipHostFree cudaFreeHost
#define hipFreeHost cudaFreeHost
#define hipMemcpy cudaMemcpy
#define hipMemcpyAsync cudaMemcpyAsync
#define hipMemcpy2D cudaMemcpy2D
#define hipMemcpy2DAsync cudaMemcpy2DAsync
#define hipMemcpyPeer cudaMemcpyPeer
#define hipMemset cudaMemset
#define hipMemsetAsync cudaMemsetAsync
#define hipMemset2D cudaMemset2D
#define hipMemcpyToSymbol cudaMemcpyToSymbol
#define hipMemcpyToSymbolAsync cudaMemcpyToSymbolAsync
#define hipMemcpyFromSymbol cudaMemcpyFromSymbol
#define hipGetSymbolAddress cudaGetSymbolAddress
#define HIP_SYMBOL(x) x

#define hipStreamCreate cudaStreamCreate
#define hipStreamCreateWithFlags cudaStreamCreateWithFlags
#define hipStreamCreateWithPriority cudaStreamCreateWithPriority
#define hipStreamDestroy cudaStreamDestroy
#define hipStreamSynchronize cudaStreamSynchronize
#define hipStreamQuery cudaStreamQuery
#define hipStreamWaitEvent cudaStreamWaitEvent

#define hipEventCreate cudaEventCreate
#define hipEventCreateWithFlags cudaEventCreateWithFlags
#define hipEventRecord cudaEventRecord
#define hipEventSynchronize cudaEventSynchronize
#define hipEventQuery cudaEventQuery
#define hipEventElapsedTime cudaEventElapsedTime
#define hipEventDestroy cudaEventDestroy

#define hipFuncSetAttribute cudaFuncSetAttribute
#define hipFuncGetAttributes cudaFuncGetAttributes
#define hipFuncSetCacheConfig cudaFuncSetCacheConfig
#define hipLaunchKernel cudaLaunchKernel
#define hipLaunchCooperativeKernel cudaLaunchCooperativeKernel
#define hipOccupancyMaxActiveBlocksPerMultiprocessor cudaOccupancyMaxActiveBlocksPerMultiprocessor
#define hipOccupancyMaxPotentialBlockSize cudaOccupancyMaxPotentialBlockSize

// ---- functions whose shape differs -----------------------------------------------
// hipHostMalloc(ptr, size, flags): pinned host memory (cudaHostAlloc).
inline hipError_t hipHostMalloc(void** ptr, size_t size, unsigned int flags = 0) {
  return cudaHostAlloc(ptr, size, flags);
}
template <class T>
inline hipError_t hipHostMalloc(T** ptr, size_t size, unsigned int flags = 0) {
  return cudaHostAlloc(reinterpret_cast<void**>(ptr), size, flags);
}
#define hipMallocHost hipHostMalloc

// HIP's device properties. CUDA 13 removed several cudaDeviceProp fields HIP code
// reads (clockRate, memoryClockRate, computeMode), so this is a struct of its own,
// filled from cudaGetDeviceProperties and device attributes. gcnArchName holds
// "sm_XY"; gcnArch is 0.
struct hipDeviceProp_t {
  char name[256];
  char gcnArchName[256];
  int gcnArch;
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  size_t sharedMemPerBlockOptin;
  size_t sharedMemPerMultiprocessor;
  size_t maxSharedMemoryPerMultiProcessor;
  size_t totalConstMem;
  size_t memPitch;
  size_t textureAlignment;
  int regsPerBlock;
  int regsPerMultiprocessor;
  int warpSize;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int maxThreadsPerMultiProcessor;
  int maxBlocksPerMultiProcessor;
  int clockRate;        // kHz
  int memoryClockRate;  // kHz
  int memoryBusWidth;   // bits
  int major;
  int minor;
  int multiProcessorCount;
  int l2CacheSize;
  int computeMode;
  int concurrentKernels;
  int pciDomainID;
  int pciBusID;
  int pciDeviceID;
  int isMultiGpuBoard;
  int canMapHostMemory;
  int integrated;
  int cooperativeLaunch;
  int managedMemory;
  int ECCEnabled;
  int asyncEngineCount;
  int unifiedAddressing;
};

inline hipError_t hipGetDeviceProperties(hipDeviceProp_t* p, int device) {
  cudaDeviceProp c;
  cudaError_t err = cudaGetDeviceProperties(&c, device);
  if (err != cudaSuccess) return err;
  std::memset(p, 0, sizeof(*p));
  std::memcpy(p->name, c.name, sizeof(p->name));
  p->name[sizeof(p->name) - 1] = '\0';
  std::snprintf(p->gcnArchName, sizeof(p->gcnArchName), "sm_%d%d", c.major, c.minor);
  p->totalGlobalMem = c.totalGlobalMem;
  p->sharedMemPerBlock = c.sharedMemPerBlock;
  p->sharedMemPerBlockOptin = c.sharedMemPerBlockOptin;
  p->sharedMemPerMultiprocessor = c.sharedMemPerMultiprocessor;
  p->maxSharedMemoryPerMultiProcessor = c.sharedMemPerMultiprocessor;
  p->totalConstMem = c.totalConstMem;
  p->memPitch = c.memPitch;
  p->textureAlignment = c.textureAlignment;
  p->regsPerBlock = c.regsPerBlock;
  p->regsPerMultiprocessor = c.regsPerMultiprocessor;
  p->warpSize = c.warpSize;
  p->maxThreadsPerBlock = c.maxThreadsPerBlock;
  for (int i = 0; i < 3; ++i) {
    p->maxThreadsDim[i] = c.maxThreadsDim[i];
    p->maxGridSize[i] = c.maxGridSize[i];
  }
  p->maxThreadsPerMultiProcessor = c.maxThreadsPerMultiProcessor;
  p->maxBlocksPerMultiProcessor = c.maxBlocksPerMultiProcessor;
  cudaDeviceGetAttribute(&p->clockRate, cudaDevAttrClockRate, device);
  cudaDeviceGetAttribute(&p->memoryClockRate, cudaDevAttrMemoryClockRate, device);
  cudaDeviceGetAttribute(&p->computeMode, cudaDevAttrComputeMode, device);
  p->memoryBusWidth = c.memoryBusWidth;
  p->major = c.major;
  p->minor = c.minor;
  p->multiProcessorCount = c.multiProcessorCount;
  p->l2CacheSize = c.l2CacheSize;
  p->concurrentKernels = c.concurrentKernels;
  p->pciDomainID = c.pciDomainID;
  p->pciBusID = c.pciBusID;
  p->pciDeviceID = c.pciDeviceID;
  p->isMultiGpuBoard = c.isMultiGpuBoard;
  p->canMapHostMemory = c.canMapHostMemory;
  p->integrated = c.integrated;
  p->cooperativeLaunch = c.cooperativeLaunch;
  p->managedMemory = c.managedMemory;
  p->ECCEnabled = c.ECCEnabled;
  p->asyncEngineCount = c.asyncEngineCount;
  p->unifiedAddressing = c.unifiedAddressing;
  return cudaSuccess;
}
