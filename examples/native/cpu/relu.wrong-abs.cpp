// Wrong on purpose: abs instead of relu (fails on negative inputs).
#include <kvault/native.h>

extern "C" int kvault_forward(const kv_tensor* inputs, int, const kv_scalar*, int,
                              kv_tensor* outputs, int, void*) {
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t i = 0; i < inputs[0].numel; ++i) y[i] = x[i] < 0.0f ? -x[i] : x[i];
  return 0;
}
