// Native-format CPU solution for suite/mse_loss.py: mean((p - t)^2), a 0-dim output
// (ndim 0, numel 1).
#include <kvault/native.h>

extern "C" int kvault_forward(const kv_tensor* inputs, int num_inputs, const kv_scalar*, int,
                              kv_tensor* outputs, int num_outputs, void*) {
  if (num_inputs != 2 || num_outputs != 1 || outputs[0].ndim != 0) return 1;
  const float* p = static_cast<const float*>(inputs[0].data);
  const float* t = static_cast<const float*>(inputs[1].data);
  const int64_t n = inputs[0].numel;
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(p[i]) - t[i];
    sum += d * d;
  }
  *static_cast<float*>(outputs[0].data) = static_cast<float>(sum / n);
  return 0;
}
