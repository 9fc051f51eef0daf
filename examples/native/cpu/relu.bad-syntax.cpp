// Broken on purpose: a missing semicolon and an undeclared function.
#include <kvault/native.h>

extern "C" int kvault_forward(const kv_tensor* inputs, int, const kv_scalar*, int,
                              kv_tensor* outputs, int, void*) {
  const float* x = static_cast<const float*>(inputs[0].data)
  relu_all(x, outputs[0].data);
  return 0;
}
