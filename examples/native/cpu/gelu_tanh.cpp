// Native-format CPU solution for suite/gelu_tanh.py (fp16 in and out, fp32 math).
// KV_FLOAT16 data is IEEE half; _Float16 (GCC 12 on x86-64) converts with
// round-to-nearest-even.
#include <kvault/native.h>

#include <cmath>

extern "C" int kvault_forward(const kv_tensor* inputs, int num_inputs, const kv_scalar*, int,
                              kv_tensor* outputs, int num_outputs, void*) {
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].dtype != KV_FLOAT16 ||
      outputs[0].dtype != KV_FLOAT16)
    return 1;
  const _Float16* x = static_cast<const _Float16*>(inputs[0].data);
  _Float16* y = static_cast<_Float16*>(outputs[0].data);
  const float k = 0.7978845608028654f;  // sqrt(2 / pi)
  for (int64_t i = 0; i < inputs[0].numel; ++i) {
    const float v = static_cast<float>(x[i]);
    y[i] = static_cast<_Float16>(0.5f * v * (1.0f + std::tanh(k * (v + 0.044715f * v * v * v))));
  }
  return 0;
}
