// Honest control under policy custom_kernel: C = A @ B in its own loops, rows split
// over std::threads; the threads touch raw pointers only, no PyTorch operator.
#include <torch/extension.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace {

// Rows [first, last) of C += A B, row-major, C zero-filled by the caller.
void MultiplyRows(const float* a, const float* b, float* c, int64_t first, int64_t last, int64_t k, int64_t n) {
  for (int64_t row = first; row < last; ++row)
    for (int64_t p = 0; p < k; ++p) {
      const float scale = a[row * k + p];
      for (int64_t col = 0; col < n; ++col) c[row * n + col] += scale * b[p * n + col];
    }
}

}  // namespace

torch::Tensor forward(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.is_cpu() && a.dtype() == torch::kFloat32 && b.dtype() == torch::kFloat32 &&
                  a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0),
              "matmul: 2-D CPU float32 matrices with matching inner sizes expected");
  const torch::Tensor lhs = a.contiguous(), rhs = b.contiguous();
  const int64_t rows = lhs.size(0), inner = lhs.size(1), cols = rhs.size(1);
  torch::Tensor product = torch::zeros({rows, cols}, lhs.options());
  const int64_t parts = 4, per_part = (rows + parts - 1) / parts;
  std::vector<std::thread> workers;
  for (int64_t first = 0; first < rows; first += per_part)
    workers.emplace_back(MultiplyRows, lhs.data_ptr<float>(), rhs.data_ptr<float>(), product.data_ptr<float>(),
                         first, std::min(rows, first + per_part), inner, cols);
  for (std::thread& worker : workers) worker.join();
  return product;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "matmul (CPU, threads)"); }
