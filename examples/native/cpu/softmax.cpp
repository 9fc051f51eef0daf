// Native-format CPU solution for suite/softmax.py: softmax over the last dimension (fp32).
#include <kvault/native.h>

#include <algorithm>
#include <cmath>
#include <limits>

extern "C" int kvault_forward(const kv_tensor* inputs, int num_inputs, const kv_scalar*, int,
                              kv_tensor* outputs, int num_outputs, void*) {
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].ndim < 1) return 1;
  const kv_tensor& x = inputs[0];
  const int64_t cols = x.shape[x.ndim - 1];
  const int64_t rows = cols == 0 ? 0 : x.numel / cols;
  const float* px = static_cast<const float*>(x.data);
  float* py = static_cast<float*>(outputs[0].data);
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = px + r * cols;
    float* y = py + r * cols;
    float row_max = -std::numeric_limits<float>::infinity();
    for (int64_t c = 0; c < cols; ++c) row_max = std::max(row_max, in[c]);
    double denom = 0.0;
    for (int64_t c = 0; c < cols; ++c) denom += std::exp(static_cast<double>(in[c] - row_max));
    for (int64_t c = 0; c < cols; ++c)
      y[c] = static_cast<float>(std::exp(static_cast<double>(in[c] - row_max)) / denom);
  }
  return 0;
}
