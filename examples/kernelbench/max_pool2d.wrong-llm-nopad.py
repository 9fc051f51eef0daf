"""KernelBench-format candidate for suite/max_pool2d.py with a real bug: padding is
taken as 0 (the window never reaches outside), so the output is one row and one column
short of the reference's: a mismatch of shape. accessor<float, 4>(), int arguments.
Built ahead the lite way.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

maxpool_source = """
#include <torch/extension.h>
#include <algorithm>

torch::Tensor maxpool2d(torch::Tensor input, int k, int s) {
    auto x = input.contiguous();
    int N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
    int OH = (H - k) / s + 1;
    int OW = (W - k) / s + 1;
    auto out = torch::zeros({N, C, OH, OW}, x.options());
    auto xa = x.accessor<float, 4>();
    auto oa = out.accessor<float, 4>();
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int i = 0; i < OH; i++)
                for (int j = 0; j < OW; j++) {
                    float m = xa[n][c][i * s][j * s];
                    for (int a = 0; a < k; a++)
                        for (int b = 0; b < k; b++)
                            m = std::max(m, xa[n][c][i * s + a][j * s + b]);
                    oa[n][c][i][j] = m;
                }
    return out;
}
"""

maxpool_ext = load_inline(
    name="maxpool_ext",
    cpp_sources=maxpool_source,
    functions=["maxpool2d"],
    extra_cflags=["-O3"],
    verbose=True,
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x):
        return maxpool_ext.maxpool2d(x, 3, 2)
