"""KernelBench-format candidate for suite/conv2d.py: nn.Conv2d kept for its parameters,
a direct convolution with #pragma omp parallel for collapse(2), -fopenmp in
extra_cflags and extra_ldflags, an int64_t padding argument, the bias as a
c10::optional<torch::Tensor>, TORCH_CHECK(x.is_contiguous()).
extra_ldflags=["-fopenmp"] is read as the library g++ links for it (-lgomp). It must
pass, built ahead the lite way.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

conv_source = """
#include <torch/extension.h>
#include <omp.h>

torch::Tensor conv2d_same(torch::Tensor x, torch::Tensor weight, c10::optional<torch::Tensor> bias, int64_t padding) {
    TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
    weight = weight.contiguous();
    const int64_t N = x.size(0), Cin = x.size(1), H = x.size(2), W = x.size(3);
    const int64_t Cout = weight.size(0), K = weight.size(2);
    const int64_t OH = H + 2 * padding - K + 1;
    const int64_t OW = W + 2 * padding - K + 1;
    auto out = torch::zeros({N, Cout, OH, OW}, x.options());
    const float* xp = x.data_ptr<float>();
    const float* wp = weight.data_ptr<float>();
    const float* bp = bias.has_value() ? bias->data_ptr<float>() : nullptr;
    float* op = out.data_ptr<float>();

    #pragma omp parallel for collapse(2)
    for (int64_t n = 0; n < N; ++n) {
        for (int64_t co = 0; co < Cout; ++co) {
            for (int64_t oh = 0; oh < OH; ++oh) {
                for (int64_t ow = 0; ow < OW; ++ow) {
                    float acc = bp ? bp[co] : 0.0f;
                    for (int64_t ci = 0; ci < Cin; ++ci) {
                        for (int64_t kh = 0; kh < K; ++kh) {
                            const int64_t ih = oh - padding + kh;
                            if (ih < 0 || ih >= H) continue;
                            for (int64_t kw = 0; kw < K; ++kw) {
                                const int64_t iw = ow - padding + kw;
                                if (iw < 0 || iw >= W) continue;
                                acc += xp[((n * Cin + ci) * H + ih) * W + iw] *
                                       wp[((co * Cin + ci) * K + kh) * K + kw];
                            }
                        }
                    }
                    op[((n * Cout + co) * OH + oh) * OW + ow] = acc;
                }
            }
        }
    }
    return out;
}
"""

conv_decl = "torch::Tensor conv2d_same(torch::Tensor x, torch::Tensor weight, c10::optional<torch::Tensor> bias, int64_t padding);"

conv_ext = load_inline(
    name="conv2d_same_omp",
    cpp_sources=[conv_decl, conv_source],
    functions=["conv2d_same"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=True,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, bias=True)
        self.padding = kernel_size // 2

    def forward(self, x):
        return conv_ext.conv2d_same(x.contiguous(), self.conv.weight, self.conv.bias, self.padding)
