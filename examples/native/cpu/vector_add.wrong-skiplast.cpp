// Wrong on purpose: the last element is never written, so it keeps the engine's
// garbage fill (NaN).
#include <kvault/native.h>

extern "C" int kvault_forward(const kv_tensor* inputs, int, const kv_scalar*, int,
                              kv_tensor* outputs, int, void*) {
  const float* a = static_cast<const float*>(inputs[0].data);
  const float* b = static_cast<const float*>(inputs[1].data);
  float* out = static_cast<float*>(outputs[0].data);
  for (int64_t i = 0; i + 1 < outputs[0].numel; ++i) out[i] = a[i] + b[i];
  return 0;
}
