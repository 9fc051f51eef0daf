// Native-format CPU solution for suite/layer_norm.py. The task has a functional twin,
// so the inputs are the twin's arguments: x [rows, dim], weight [dim], bias [dim].
#include <kvault/native.h>

#include <cmath>

extern "C" int kvault_forward(const kv_tensor* inputs, int num_inputs, const kv_scalar*, int,
                              kv_tensor* outputs, int num_outputs, void*) {
  if (num_inputs != 3 || num_outputs != 1) return 1;
  const kv_tensor& x = inputs[0];
  const int64_t dim = inputs[1].shape[0];
  const int64_t rows = dim == 0 ? 0 : x.numel / dim;
  const float* px = static_cast<const float*>(x.data);
  const float* w = static_cast<const float*>(inputs[1].data);
  const float* b = static_cast<const float*>(inputs[2].data);
  float* py = static_cast<float*>(outputs[0].data);
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = px + r * dim;
    double mean = 0.0;
    for (int64_t c = 0; c < dim; ++c) mean += in[c];
    mean /= dim;
    double var = 0.0;
    for (int64_t c = 0; c < dim; ++c) var += (in[c] - mean) * (in[c] - mean);
    var /= dim;
    const double inv = 1.0 / std::sqrt(var + 1e-5);
    for (int64_t c = 0; c < dim; ++c)
      py[r * dim + c] = static_cast<float>((in[c] - mean) * inv * w[c] + b[c]);
  }
  return 0;
}
