// Native-format CPU solution for suite/vector_add.py: out = a + b (fp32).
#include <kvault/native.h>

extern "C" int kvault_forward(const kv_tensor* inputs, int num_inputs, const kv_scalar*, int,
                              kv_tensor* outputs, int num_outputs, void*) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  const float* a = static_cast<const float*>(inputs[0].data);
  const float* b = static_cast<const float*>(inputs[1].data);
  float* out = static_cast<float*>(outputs[0].data);
  for (int64_t i = 0; i < outputs[0].numel; ++i) out[i] = a[i] + b[i];
  return 0;
}
