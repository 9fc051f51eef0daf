# Not a cheat: a relu whose load_inline call does build CUDA (cuda_sources, passed by
# position). On the cpu backend that is the answer's own compile_error (reward 0,
# a failed sample in pass@k), never `unsupported`; on the cuda backend it passes.
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
__global__ void relu_kernel(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
torch::Tensor relu_forward(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const int64_t n = xc.numel();
  if (n > 0) relu_kernel<<<(n + 255) / 256, 256>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
"""
_ext = load_inline("kvault_adv_relu_cuda_on_cpu", "torch::Tensor relu_forward(torch::Tensor x);", _CUDA,
                   functions=["relu_forward"])


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_forward(x)
