// Cheat (native format): points the output descriptor at the input's memory instead
// of writing the transpose, hoping the harness returns what the descriptor names.
// The harness returns the outputs it allocated (garbage-filled), never a descriptor.
#include <kvault/native.h>

extern "C" int kvault_forward(const kv_tensor* inputs, int num_inputs, const kv_scalar* scalars,
                              int num_scalars, kv_tensor* outputs, int num_outputs, void* stream) {
  (void)scalars, (void)num_scalars, (void)stream;
  if (num_inputs != 1 || num_outputs != 1) return 1;
  outputs[0].data = inputs[0].data;
  outputs[0].strides[0] = 1;
  outputs[0].strides[1] = inputs[0].shape[1];
  return 0;
}
