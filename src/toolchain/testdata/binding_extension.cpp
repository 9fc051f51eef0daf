// The lite extension build's binding against pybind11's (RealCompilerTest): every
// parameter and return kind it binds, overloads and a lambda.
#include <torch/extension.h>

#include <tuple>
#include <vector>

torch::Tensor scale(const torch::Tensor& x, double s) { return x * s; }
std::tuple<torch::Tensor, torch::Tensor> split_sign(torch::Tensor x) { return {x.clamp_min(0), x.clamp_max(0)}; }
std::vector<torch::Tensor> chunks(torch::Tensor x, int64_t n) { return x.chunk(n); }
int64_t count(std::vector<int64_t> dims, bool twice) { return (twice ? 2 : 1) * static_cast<int64_t>(dims.size()); }
float half_of(float v) { return v / 2; }
torch::Tensor pick(torch::Tensor x, c10::optional<torch::Tensor> y, int k) {
  TORCH_CHECK(k >= 0, "k must be >= 0");
  return y.has_value() ? *y + k : x + k;
}
void fill(torch::Tensor& x, double v) { x.fill_(v); }
torch::Tensor sum_dims(torch::Tensor x, at::IntArrayRef dims, c10::optional<double> w) {
  return x.sum(dims) * w.value_or(1.0);
}
int64_t name_len(std::string s, c10::optional<int64_t> n) { return static_cast<int64_t>(s.size()) + n.value_or(0); }
std::vector<torch::Tensor> halves(std::vector<torch::Tensor> xs) {
  for (auto& x : xs) x = x / 2;
  return xs;
}
torch::Tensor over(torch::Tensor x) { return x + 1; }
torch::Tensor over(torch::Tensor x, torch::Tensor y) { return x + y; }

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("scale", &scale, "x * s");
  m.def("split_sign", &split_sign);
  m.def("chunks", &chunks);
  m.def("count", &count);
  m.def("half_of", half_of);
  m.def("pick", &pick);
  m.def("fill", &fill);
  m.def("sum_dims", &sum_dims);
  m.def("halves", &halves);
  m.def("name_len", &name_len);
  m.def("over", static_cast<torch::Tensor (*)(torch::Tensor)>(&over));
  m.def("over", static_cast<torch::Tensor (*)(torch::Tensor, torch::Tensor)>(&over));
  m.def("times", [](torch::Tensor x, int64_t k) { return x * k; });
}
