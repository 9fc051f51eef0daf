// Broken on purpose: kvault_forward with another signature is a C++ overload with a
// mangled name, so the library exports no kvault_forward symbol.
#include <kvault/native.h>

int kvault_forward(const kv_tensor* inputs, kv_tensor* outputs) {
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t i = 0; i < inputs[0].numel; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return 0;
}
