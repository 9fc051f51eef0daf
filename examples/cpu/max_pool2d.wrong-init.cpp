// WRONG on purpose (suite/max_pool2d.py): the running maximum starts at 0 instead
// of -infinity, so a window whose values are all negative yields 0.
#include <limits>
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor x) {
  TORCH_CHECK(x.device().is_cpu(), "max_pool2d: CPU tensor expected");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "max_pool2d: float32 expected");
  TORCH_CHECK(x.dim() == 4, "max_pool2d: NCHW input expected");
  const int64_t kernel = 3, stride = 2, pad = 1;
  const auto xc = x.contiguous();
  const int64_t planes = xc.size(0) * xc.size(1), height = xc.size(2), width = xc.size(3);
  const int64_t out_h = (height + 2 * pad - kernel) / stride + 1;
  const int64_t out_w = (width + 2 * pad - kernel) / stride + 1;
  auto out = torch::empty({xc.size(0), xc.size(1), out_h, out_w}, xc.options());
  const float* px = xc.data_ptr<float>();
  float* po = out.data_ptr<float>();
  for (int64_t p = 0; p < planes; ++p) {
    const float* plane = px + p * height * width;
    for (int64_t oh = 0; oh < out_h; ++oh)
      for (int64_t ow = 0; ow < out_w; ++ow) {
        float best = 0.0f;
        for (int64_t i = 0; i < kernel; ++i) {
          const int64_t ih = oh * stride - pad + i;
          if (ih < 0 || ih >= height) continue;
          for (int64_t j = 0; j < kernel; ++j) {
            const int64_t iw = ow * stride - pad + j;
            if (iw < 0 || iw >= width) continue;
            best = std::max(best, plane[ih * width + iw]);
          }
        }
        po[(p * out_h + oh) * out_w + ow] = best;
      }
  }
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "max_pool2d (CPU)"); }
