/* KernelVault native kernel format (docs/native-format.md).
 *
 * A native candidate is one C++, CUDA or HIP source that includes this header (and
 * no PyTorch header) and defines
 *
 *   extern "C" int kvault_forward(const kv_tensor* inputs, int num_inputs,
 *                                 const kv_scalar* scalars, int num_scalars,
 *                                 kv_tensor* outputs, int num_outputs, void* stream);
 *
 * The engine allocates the outputs (filled with garbage) before the call; the
 * function writes every output element and returns 0, or a non-zero error code
 * (optionally explained by kvault_last_error()).
 *
 * C99 and C++ compatible. Layouts are fixed: the engine reads them through ctypes.
 */
#ifndef KVAULT_NATIVE_H_
#define KVAULT_NATIVE_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KV_MAX_DIMS 8

/* Element types (kv_tensor.dtype). */
typedef enum kv_dtype {
  KV_NONE = 0, /* an argument that was None: data is NULL, ndim 0 */
  KV_FLOAT32 = 1,
  KV_FLOAT64 = 2,
  KV_FLOAT16 = 3,  /* IEEE half: 16 raw bits */
  KV_BFLOAT16 = 4, /* bfloat16: 16 raw bits, the top half of a float32 */
  KV_INT8 = 5,
  KV_INT16 = 6,
  KV_INT32 = 7,
  KV_INT64 = 8,
  KV_UINT8 = 9,
  KV_BOOL = 10 /* one byte, 0 or 1 */
} kv_dtype;

/* One tensor. `data` points to device memory on GPU backends, host memory on the
 * cpu backend. Element (i0, ..., i{ndim-1}) is at data + sum(ik * strides[k]) elements.
 * Inputs are always contiguous (row-major); outputs are always contiguous. A 0-d
 * tensor has ndim 0 and numel 1. Entries of shape/strides past ndim are 0. */
typedef struct kv_tensor {
  void* data;
  int32_t dtype; /* a kv_dtype */
  int32_t ndim;  /* 0 .. KV_MAX_DIMS */
  int64_t numel; /* product of shape (1 for ndim 0) */
  int64_t shape[KV_MAX_DIMS];
  int64_t strides[KV_MAX_DIMS]; /* in elements, not bytes */
} kv_tensor;

/* Scalar kinds (kv_scalar.kind). */
typedef enum kv_scalar_kind { KV_SCALAR_INT = 1, KV_SCALAR_FLOAT = 2, KV_SCALAR_BOOL = 3 } kv_scalar_kind;

/* One Python int, float or bool argument. Both fields are always set:
 * int n -> i = n, f = (double)n; float x -> f = x, i = (int64_t)x (0 if x is not
 * finite or out of range); bool b -> i = f = b ? 1 : 0. */
typedef struct kv_scalar {
  int32_t kind; /* a kv_scalar_kind */
  int32_t reserved;
  int64_t i;
  double f;
} kv_scalar;

/* The entry point a candidate defines. `stream` is the cudaStream_t / hipStream_t
 * to launch on (NULL = the default stream), NULL on the cpu backend. */
int kvault_forward(const kv_tensor* inputs, int num_inputs, const kv_scalar* scalars,
                   int num_scalars, kv_tensor* outputs, int num_outputs, void* stream);

/* Optional: a message for the last non-zero return (NUL-terminated, owned by the
 * candidate). Candidates need not define it. */
const char* kvault_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* KVAULT_NATIVE_H_ */
