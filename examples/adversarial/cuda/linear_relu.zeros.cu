// Honest control under the fused policy, in the habits of model-written code: the
// output from torch::zeros, one block per row, launched with <<<grid, block>>> on the
// legacy default stream.
#include <torch/extension.h>

__global__ void row_bias_relu(const float* y, const float* bias, float* out, int64_t cols) {
  const float* row = y + blockIdx.x * cols;
  float* dst = out + blockIdx.x * cols;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) dst[c] = fmaxf(row[c] + bias[c], 0.f);
}

torch::Tensor forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
  const auto y = at::mm(x, weight.t()).contiguous();
  auto out = torch::zeros_like(y);
  row_bias_relu<<<y.size(0), 128>>>(y.data_ptr<float>(), bias.contiguous().data_ptr<float>(), out.data_ptr<float>(),
                                    y.size(1));
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "zeros, default-stream epilogue"); }
