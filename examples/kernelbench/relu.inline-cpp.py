"""KernelBench-format candidate for suite/relu.py with an inline C++ loop (CPU).

Its load_inline call is built by the engine through the compile cache
(docs/toolchains.md, "load_inline candidates"), not by PyTorch's ninja build.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_SOURCE = r"""
torch::Tensor relu_forward(torch::Tensor x) {
  TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat32, "relu: CPU float32 expected");
  const auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* px = xc.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t i = 0, n = xc.numel(); i < n; ++i) py[i] = px[i] > 0.0f ? px[i] : 0.0f;
  return y;
}
"""

_ext = load_inline(name="kvault_example_relu_cpp", cpp_sources=_CPP_SOURCE,
                   functions=["relu_forward"], extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_forward(x)
