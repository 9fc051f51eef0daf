// Cheat under policy custom_kernel on the GPU: cuBLAS called from the extension on
// PyTorch's handle, below PyTorch's dispatcher: no operator is dispatched, but the
// only kernels launched are the library's.
#include <ATen/cuda/CUDAContext.h>
#include <cublas_v2.h>
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor a, torch::Tensor b) {
  auto ac = a.contiguous(), bc = b.contiguous();
  const int m = ac.size(0), k = ac.size(1), n = bc.size(1);
  auto c = torch::empty({m, n}, ac.options());
  const float one = 1.f, zero = 0.f;
  // Row-major C = A B is column-major C^T = B^T A^T.
  TORCH_CHECK(cublasSgemm(at::cuda::getCurrentCUDABlasHandle(), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one,
                          bc.data_ptr<float>(), n, ac.data_ptr<float>(), k, &zero, c.data_ptr<float>(),
                          n) == CUBLAS_STATUS_SUCCESS,
              "cublasSgemm failed");
  return c;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "matmul via cuBLAS"); }
