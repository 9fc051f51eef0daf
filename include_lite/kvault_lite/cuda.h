#pragma once
// The lite extension build's CUDA helpers (docs/toolchains.md, "The lite extension
// build"): streams, device guards and error checks as PyTorch's ATen/cuda and c10/cuda
// headers give them, declared without those headers and forwarded to PyTorch by
// lite.cc (built with KVAULT_LITE_CUDA).
#include <cuda_runtime_api.h>

#include "tensor.h"

// cuBLAS's handle type, as <cublas_api.h> declares it (the same declaration twice is
// one), so that the lite headers need not include cuBLAS.
struct cublasContext;
typedef struct cublasContext* cublasHandle_t;

namespace kvault_lite {

// c10::cuda::CUDAStream, as far as candidates use it: a cudaStream_t.
class CUDAStream {
 public:
  explicit CUDAStream(cudaStream_t stream, int device_index) : stream_(stream), device_index_(device_index) {}
  operator cudaStream_t() const { return stream_; }
  cudaStream_t stream() const { return stream_; }
  int8_t device_index() const { return static_cast<int8_t>(device_index_); }

 private:
  cudaStream_t stream_;
  int device_index_;
};

// PyTorch's current stream of `device_index` (-1: the current device).
CUDAStream getCurrentCUDAStream(int device_index = -1);
// cudaDeviceProp of the current device (of `device`), cached by PyTorch.
cudaDeviceProp* getCurrentDeviceProperties();
cudaDeviceProp* getDeviceProperties(int64_t device);
// PyTorch's cuBLAS handle of the current device, on its current stream.
cublasHandle_t getCurrentCUDABlasHandle();
int current_device();

// c10::cuda::CUDAGuard: makes `device` current, and the previous device current again
// when it ends. PyTorch's guard does the work (lite.cc holds one).
class CUDAGuard {
 public:
  explicit CUDAGuard(Device device);
  explicit CUDAGuard(int device_index);
  CUDAGuard(const CUDAGuard&) = delete;
  CUDAGuard& operator=(const CUDAGuard&) = delete;
  ~CUDAGuard();

 private:
  void* guard_;
};

// c10::cuda::OptionalCUDAGuard: CUDAGuard when given a device, nothing otherwise.
class OptionalCUDAGuard {
 public:
  OptionalCUDAGuard() : guard_(nullptr) {}
  explicit OptionalCUDAGuard(std::optional<Device> device);
  OptionalCUDAGuard(const OptionalCUDAGuard&) = delete;
  OptionalCUDAGuard& operator=(const OptionalCUDAGuard&) = delete;
  ~OptionalCUDAGuard();

 private:
  void* guard_;
};

// at::device_of: the tensor's device, nothing for an undefined tensor.
std::optional<Device> device_of(const Tensor& t);

}  // namespace kvault_lite
