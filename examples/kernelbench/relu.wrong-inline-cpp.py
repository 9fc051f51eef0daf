"""Wrong KernelBench-format candidate for suite/relu.py: an inline C++ loop that
returns |x| instead of max(x, 0) (CPU; built by the engine, see relu.inline-cpp.py)."""
import torch.nn as nn
from torch.utils import cpp_extension

_ext = cpp_extension.load_inline(
    "kvault_example_relu_abs",
    ["""
torch::Tensor relu_forward(torch::Tensor x) {
  const auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* px = xc.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t i = 0, n = xc.numel(); i < n; ++i) py[i] = px[i] < 0.0f ? -px[i] : px[i];
  return y;
}
"""],
    functions={"relu_forward": "relu, wrongly"})


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_forward(x)
