// Correct CPU solution for suite/conv2d.py (functional twin: x, weight, bias):
// direct NCHW convolution, stride 1, padding kernel_size / 2 on both sides, plus bias.
#include <torch/extension.h>

torch::Tensor forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
  TORCH_CHECK(x.device().is_cpu(), "conv2d: CPU tensors expected");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32 &&
                  bias.scalar_type() == torch::kFloat32,
              "conv2d: float32 expected");
  TORCH_CHECK(x.dim() == 4 && weight.dim() == 4 && x.size(1) == weight.size(1),
              "conv2d: x [N, C, H, W] and weight [O, C, KH, KW] expected");
  const auto xc = x.contiguous();
  const auto wc = weight.contiguous();
  const auto bc = bias.contiguous();
  const int64_t batch = xc.size(0), chans = xc.size(1), height = xc.size(2), width = xc.size(3);
  const int64_t outs = wc.size(0), kh = wc.size(2), kw = wc.size(3);
  TORCH_CHECK(bc.numel() == outs, "conv2d: bias must have one value per output channel");
  const int64_t pad = kw / 2;  // the reference pads both dimensions by weight.shape[-1] // 2
  const int64_t out_h = height + 2 * pad - kh + 1;
  const int64_t out_w = width + 2 * pad - kw + 1;
  TORCH_CHECK(out_h > 0 && out_w > 0, "conv2d: kernel larger than padded input");
  auto out = torch::empty({batch, outs, out_h, out_w}, xc.options());
  const float* px = xc.data_ptr<float>();
  const float* pw = wc.data_ptr<float>();
  const float* pb = bc.data_ptr<float>();
  float* po = out.data_ptr<float>();
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t o = 0; o < outs; ++o)
      for (int64_t oh = 0; oh < out_h; ++oh)
        for (int64_t ow = 0; ow < out_w; ++ow) {
          float acc = pb[o];
          for (int64_t c = 0; c < chans; ++c)
            for (int64_t i = 0; i < kh; ++i) {
              const int64_t ih = oh + i - pad;
              if (ih < 0 || ih >= height) continue;
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t iw = ow + j - pad;
                if (iw < 0 || iw >= width) continue;
                acc += px[((n * chans + c) * height + ih) * width + iw] *
                       pw[((o * chans + c) * kh + i) * kw + j];
              }
            }
          po[((n * outs + o) * out_h + oh) * out_w + ow] = acc;
        }
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "conv2d (CPU)"); }
