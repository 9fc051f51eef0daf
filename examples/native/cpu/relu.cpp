// Native-format CPU solution for suite/relu.py: out = max(x, 0) (fp32).
#include <kvault/native.h>

static const char* g_error = "";

extern "C" const char* kvault_last_error(void) { return g_error; }

extern "C" int kvault_forward(const kv_tensor* inputs, int num_inputs, const kv_scalar* scalars,
                              int num_scalars, kv_tensor* outputs, int num_outputs, void* stream) {
  (void)scalars; (void)num_scalars; (void)stream;
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].dtype != KV_FLOAT32) {
    g_error = "relu: expected one float32 input and one output";
    return 1;
  }
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t i = 0; i < inputs[0].numel; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return 0;
}
