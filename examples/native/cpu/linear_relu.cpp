// Native-format CPU solution for suite/linear_relu.py: relu(x @ W^T + b). Twin
// arguments: x [batch, in], weight [out, in], bias [out].
#include <kvault/native.h>

extern "C" int kvault_forward(const kv_tensor* inputs, int num_inputs, const kv_scalar*, int,
                              kv_tensor* outputs, int num_outputs, void*) {
  if (num_inputs != 3 || num_outputs != 1) return 1;
  const int64_t batch = inputs[0].shape[0], in = inputs[0].shape[1], out = inputs[1].shape[0];
  const float* x = static_cast<const float*>(inputs[0].data);
  const float* w = static_cast<const float*>(inputs[1].data);
  const float* b = static_cast<const float*>(inputs[2].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t o = 0; o < out; ++o) {
      double acc = b[o];
      for (int64_t k = 0; k < in; ++k) acc += static_cast<double>(x[i * in + k]) * w[o * in + k];
      y[i * out + o] = acc > 0.0 ? static_cast<float>(acc) : 0.0f;
    }
  return 0;
}
