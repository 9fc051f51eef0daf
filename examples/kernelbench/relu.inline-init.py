"""KernelBench-format candidate for suite/relu.py whose constructor builds its C++
loop (CPU).

The constructor runs for every run; its load_inline call is still built once, by
the engine (docs/toolchains.md, "load_inline candidates"): the call is noted while
ModelNew is constructed in a worker that is then discarded.
"""
import torch
import torch.nn as nn
import torch.utils.cpp_extension as cpp_extension

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


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = cpp_extension.load_inline(name="kvault_example_relu_init", cpp_sources=[_CPP_SOURCE],
                                             functions=["relu_forward"], extra_cflags=["-O2"])

    def forward(self, x):
        return self.ext.relu_forward(x)
