// The lite extension build's tensor API against PyTorch's (RealCompilerTest): every
// member and function include_lite/ declares, built both ways and called the same.
#include <torch/extension.h>
#include <torch/torch.h>
#include <ATen/AccumulateType.h>
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>

#include <sstream>
#include <string>
#include <tuple>
#include <vector>

// Shapes, strides, types and devices, as one string. (get_device() is cast: PyTorch
// 2.x returns a DeviceIndex, a char to c10::str; the lite one returns int64_t.)
std::string describe(torch::Tensor x) {
  return c10::str(x.dim(), " ", x.ndimension(), " ", x.numel(), " ", x.sizes(), " ", x.strides(), " ",
                  x.scalar_type(), " ", x.device(), " ", x.element_size(), " ", x.itemsize(), " ",
                  x.nbytes(), " ", x.storage_offset(), " ",
                  static_cast<int64_t>(x.get_device()), " ", x.is_cuda(), x.is_cpu(),
                  x.is_contiguous(), x.requires_grad(), x.defined(), " ", x.size(-1), " ", x.stride(0), " ",
                  c10::toString(x.scalar_type()), " ", 2.5, " ", 'c', " ", std::string("s"));
}

// Factories with options, dtypes spelt every way.
std::vector<torch::Tensor> make(torch::Tensor like) {
  auto opts = torch::TensorOptions().dtype(torch::kInt32).device(like.device());
  std::vector<torch::Tensor> out;
  out.push_back(torch::empty({2, 3}, like.options()).fill_(1.5));
  out.push_back(torch::zeros({3}, opts));
  out.push_back(torch::ones({2, 2}, torch::kFloat64));
  out.push_back(torch::full({2}, 7, torch::dtype(torch::kInt64)));
  out.push_back(torch::full({2}, 7.5));
  out.push_back(torch::full({1}, true));
  out.push_back(at::zeros_like(like));
  out.push_back(at::ones_like(like, at::kHalf));
  out.push_back(torch::empty_like(like).zero_());
  out.push_back(torch::empty_like(like, torch::kFloat16).fill_(2));
  out.push_back(torch::empty_strided({2, 2}, {1, 2}).fill_(3));
  out.push_back(torch::zeros_like(like, torch::kInt8));
  out.push_back(torch::ones({0}));
  return out;
}

// Views, copies and arithmetic.
std::vector<torch::Tensor> shape_ops(torch::Tensor x) {  // x: 2 x 3 x 4, float
  std::vector<torch::Tensor> out = {x.view({6, 4}),      x.reshape({4, 6}), x.flatten(), x.flatten(1),
                                    x.transpose(0, 2),   x.select(0, 0).t(),          x.permute({2, 0, 1}),
                                    x.unsqueeze(1),      x.unsqueeze(0).squeeze(),
                                    x.narrow(2, 1, 2),   x.select(1, 0),    x.contiguous(), x.clone(),
                                    x.to(torch::kDouble), x.to(torch::Device(torch::kCPU)), x.cpu(),
                                    x.sum(),             x.sum(std::vector<int64_t>{0, 2}),     x.sum(1, true), x.mean(),
                                    x.mean({1}, true),   x.clamp_min(0),    x.clamp_max(0.5), x.relu(),
                                    -x,                  x + x,             x - 1,          2 * x,
                                    x / 4,               1.0 - x,           x * x,          x / (x + 10),
                                    x.expand({2, 2, 3, 4}), x.squeeze(0),
                                    (x + 2).sqrt(),      (x + 2).rsqrt(),   x.exp(),        x.abs(),
                                    torch::sqrt(x + 2),  torch::rsqrt(x + 2), torch::exp(x), torch::abs(x),
                                    torch::relu(x),      torch::mean(x),    torch::sum(x),  x[1],
                                    torch::full_like(x, 2.5), torch::full_like(x, 3, torch::kDouble)};
  for (const auto& c : x.chunk(3, 2)) out.push_back(c);
  auto y = x.clone();
  y += x;
  y -= 1;
  y *= 2;
  y /= x + 5;
  out.push_back(y);
  auto w = torch::zeros_like(x);
  w[0][1] = 7.5f;  // a temporary view: filled
  w[1] = x[0];     // copied into
  out.push_back(w);
  auto z = torch::zeros_like(x);
  z.copy_(x);
  out.push_back(z);
  return out;
}

// Raw data of each known type, item, and the dispatch macros.
std::vector<double> data_of(torch::Tensor x) {
  std::vector<double> out;
  auto f = x.to(torch::kFloat).contiguous();
  out.push_back(f.data_ptr<float>()[0]);
  out.push_back(f.data_ptr<float>()[1]);
  out.push_back(static_cast<const float*>(f.data_ptr())[2]);
  out.push_back(x.to(torch::kDouble).contiguous().data_ptr<double>()[0]);
  out.push_back(x.to(torch::kInt32).contiguous().data_ptr<int32_t>()[0]);
  out.push_back(x.to(torch::kInt64).contiguous().data_ptr<int64_t>()[0]);
  out.push_back(x.to(torch::kInt16).contiguous().data_ptr<int16_t>()[0]);
  out.push_back(x.to(torch::kInt8).contiguous().data_ptr<int8_t>()[0]);
  out.push_back(x.to(torch::kUInt8).contiguous().data_ptr<uint8_t>()[0]);
  out.push_back(x.to(torch::kBool).contiguous().data_ptr<bool>()[0]);
  out.push_back(static_cast<float>(x.to(torch::kHalf).contiguous().data_ptr<at::Half>()[0]));
  out.push_back(static_cast<float>(x.to(torch::kBFloat16).contiguous().data_ptr<at::BFloat16>()[0]));
  out.push_back(x.sum().item<float>());
  out.push_back(x.sum().to(torch::kLong).item<int64_t>());
  AT_DISPATCH_FLOATING_TYPES_AND_HALF(x.scalar_type(), "data_of", [&] {
    out.push_back(static_cast<double>(x.contiguous().data_ptr<scalar_t>()[0]) + sizeof(scalar_t));
  });
  AT_DISPATCH_FLOATING_TYPES_AND2(at::ScalarType::Half, at::ScalarType::BFloat16, x.scalar_type(), "data_of2",
                                  [&] { out.push_back(sizeof(scalar_t)); });
  AT_DISPATCH_ALL_TYPES(x.scalar_type(), "all", [&] { out.push_back(sizeof(scalar_t) * 10); });
  return out;
}

// Errors: data_ptr of the wrong type, TORCH_CHECK with and without a message, a
// dispatch over types that do not hold the tensor's.
void fail(torch::Tensor x, int64_t which) {
  if (which == 0) x.data_ptr<double>();
  TORCH_CHECK(which != 1, "which is ", which, " of ", x.sizes());
  TORCH_CHECK(which != 2);
  if (which == 3) AT_DISPATCH_INTEGRAL_TYPES(x.scalar_type(), "ints", [&] { (void)sizeof(scalar_t); });
  if (which == 4) x.view({7});
}

torch::Tensor maybe(c10::optional<torch::Tensor> x, c10::optional<int64_t> n, c10::optional<double> w) {
  TORCH_CHECK(x.has_value(), "no tensor");
  return *x * static_cast<double>(n.value_or(1)) * w.value_or(1.0);
}

std::tuple<torch::Tensor, int64_t, double, bool> mixed(torch::Tensor x, at::IntArrayRef dims, std::vector<int64_t> v) {
  return {x.sum(dims), static_cast<int64_t>(v.size()), 0.25, dims.size() == 1};
}

// Integer kinds models pass (a seed as unsigned long long, sizes as size_t, strides as
// std::tuple<int, int>), each back as it came.
std::tuple<int64_t, uint64_t, unsigned int, int64_t> ints(std::tuple<int, int> pair,
                                                          std::tuple<int64_t, int64_t, int64_t> triple,
                                                          unsigned long long seed, unsigned int u, size_t n,
                                                          long long ll) {
  return {std::get<0>(pair) * 10 + std::get<1>(pair) + std::get<2>(triple), static_cast<uint64_t>(seed) + n, u,
          ll + static_cast<int64_t>(std::get<0>(triple))};
}

// Accessors (a row of one, a packed one), at::parallel_for over the rows, and the
// accessors' checks (dimensions, element type).
torch::Tensor accessed(torch::Tensor x, int64_t which) {  // x: 2-D float, any strides
  if (which == 1) x.accessor<float, 3>();
  if (which == 2) x.accessor<double, 2>();
  auto out = torch::zeros(x.sizes(), x.options());
  const auto a = x.accessor<float, 2>();
  auto o = out.accessor<float, 2>();
  at::parallel_for(0, a.size(0), 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      auto row = a[i];
      for (int64_t j = 0; j < row.size(0); ++j)
        o[i][j] = row[j] * 2 + a.stride(0) + (at::get_num_threads() > 0);
    }
  });
  auto p = x.packed_accessor64<float, 2>();
  o[0][0] = p[0][0] + p.size(1) * 100 + p.stride(1) * 1000;
  return out;
}

// PyTorch's operations beside kernels, their deprecated spellings (data<T>, type(),
// packed_accessor) and the newer dispatch macros.
std::vector<torch::Tensor> ops(torch::Tensor x, torch::Tensor w) {  // x: 2 x 3 x 4, w: 4 x 5 (float)
  auto m = x.select(0, 0);                                        // 3 x 4
  auto img = x.unsqueeze(0);                                      // 1 x 2 x 3 x 4
  auto k = torch::ones({2, 2, 2, 2}) / 8;
  std::vector<torch::Tensor> out = {
      x.add(1), x.add(x, 2), x.sub(0.5), x.sub(x, 3), x.mul(x), x.mul(2), x.div(x + 5), x.div(4),
      x.pow(2), x.pow(x.abs()), x.tanh(), x.sigmoid(), (x + 2).log(), x.max(), x.min(),
      x.clamp(-0.5, 0.5), x.clamp(0), x.clamp(c10::nullopt, 0.25), m.matmul(w), m.mm(w), x.bmm(x.transpose(1, 2)),
      x.softmax(-1), x.log_softmax(1), x.softmax(2, torch::kDouble), x.slice(2, 1, 3), x.slice(1, 1), x.slice(2, 0, 4, 2),
      x.index_select(2, torch::ones({2}, torch::kLong)), m.expand_as(x), x.view_as(m.expand({4, 3, 4}).narrow(0, 0, 2)),
      x.reshape_as(x.view({6, 4})), torch::tanh(x), torch::sigmoid(x), torch::log(x + 2), torch::clamp(x, -1, 0.5),
      torch::softmax(x, 1), torch::log_softmax(x, -1), torch::matmul(x, w), torch::mm(m, w), torch::bmm(x, x.transpose(1, 2)),
      torch::addmm(torch::ones({5}), m, w), torch::addmm(torch::ones({5}), m, w, 0.5, 2), torch::cat({x, x}, 1),
      torch::cat(std::vector<torch::Tensor>{m, m}), torch::stack({m, m}, 2), torch::linear(m, w.t()),
      torch::linear(m, w.t(), torch::ones({5})), torch::conv2d(img, k), torch::conv2d(img, k, torch::ones({2}), 1, 1),
      torch::conv2d(img, k, {}, {1, 2}, {1, 0}, 1, 1), torch::conv2d(img, torch::ones({2, 2, 3, 3}), {}, 1, "same"),
      torch::conv_transpose2d(img, k),
      torch::conv_transpose2d(img, k, torch::ones({2}), {2, 2}, {1, 1}, {1, 1}, 1, 1)};
  auto y = x.clone();
  y.add_(x).add_(1, 2).sub_(x, 0.5).sub_(1).mul_(x).mul_(2).div_(x.abs() + 1).div_(3).clamp_(-1, 1).relu_();
  out.push_back(y);
  out.push_back(torch::full({1}, static_cast<double>(x.contiguous().data<float>()[5])));
  auto xc = x.contiguous();
  auto p = xc.packed_accessor<float, 3>();
  out.push_back(torch::full({1}, static_cast<double>(p.size(2) + p.stride(0))));
  out.push_back(torch::full({1}, static_cast<double>(x.type().is_cuda() * 10 + (x.type().scalarType() == torch::kFloat))));
  AT_DISPATCH_FLOATING_TYPES(x.type(), "ops", [&] { out.push_back(torch::full({1}, static_cast<double>(sizeof(scalar_t)))); });
  AT_DISPATCH_SWITCH(x.scalar_type(), "ops_switch",
                     AT_DISPATCH_CASE(at::ScalarType::Int, [&] { out.push_back(torch::zeros({1})); })
                         AT_DISPATCH_CASE_FLOATING_TYPES_AND_HALF([&] { out.push_back(torch::full({1}, sizeof(scalar_t) * 3.0)); }));
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, x.scalar_type(), "ops3",
                             [&] { out.push_back(torch::full({1}, sizeof(scalar_t) * 5.0)); });
  AT_DISPATCH_INTEGRAL_TYPES_AND(at::kBool, x.to(torch::kBool).scalar_type(), "ops_ints",
                                 [&] { out.push_back(torch::full({1}, sizeof(scalar_t) * 7.0)); });
  return out;
}

// at::acc_type (CPU and CUDA) and at::opmath_type of each type, as size * 10 + whether
// floating, and a sum accumulated the way dispatching kernels do.
template <class T>
int64_t Code() {
  return static_cast<int64_t>(sizeof(T)) * 10 + std::is_floating_point_v<T>;
}
template <class T>
std::vector<int64_t> Codes() {
  return {Code<at::acc_type<T, true>>(), Code<at::acc_type<T, false>>(), Code<at::opmath_type<T>>()};
}
std::vector<double> acc(torch::Tensor x) {
  std::vector<double> out;
  for (const auto& codes : {Codes<at::Half>(), Codes<at::BFloat16>(), Codes<float>(), Codes<double>(), Codes<int8_t>(),
                            Codes<uint8_t>(), Codes<char>(), Codes<int16_t>(), Codes<int32_t>(), Codes<int64_t>(),
                            Codes<bool>()})
    out.insert(out.end(), codes.begin(), codes.end());
  AT_DISPATCH_ALL_TYPES(x.scalar_type(), "acc", [&] {
    using acc_t = at::acc_type<scalar_t, false>;
    auto xc = x.contiguous();
    acc_t total = 0;
    for (int64_t i = 0; i < xc.numel(); ++i) total += static_cast<acc_t>(xc.data_ptr<scalar_t>()[i]);
    out.push_back(static_cast<double>(total));
  });
  return out;
}

// The checks that raise other errors than RuntimeError.
void fail_as(torch::Tensor x, int64_t which) {
  TORCH_CHECK_VALUE(which != 0, "value ", which);
  TORCH_CHECK_INDEX(which != 1, "index ", x.dim());
  TORCH_CHECK_TYPE(which != 2, "type");
  TORCH_CHECK_NOT_IMPLEMENTED(which != 3, "not implemented");
}

// Lists of ints, floats and doubles, back as a pair.
std::pair<std::vector<int>, double> lists(std::vector<int> a, std::vector<float> b, const std::vector<double>& c) {
  double s = 0;
  for (float v : b) s += v;
  for (double v : c) s += v * 10;
  a.push_back(static_cast<int>(a.size()));
  return {a, s};
}

// What x.dtype() is (PyTorch's TypeMeta: printed by its name, its size, compared with
// ScalarType and TypeMeta, converted), as a string.
std::string dtypes(torch::Tensor x) {
  auto d = x.dtype();
  std::ostringstream printed;
  printed << x.to(torch::kHalf).dtype();
  return c10::str(d, " ", printed.str(), " ", x.to(torch::kInt8).dtype().itemsize(), " ", d.itemsize(), " ",
                  d == torch::kFloat32, d != torch::kDouble, torch::kFloat == d, torch::kInt != d,
                  d == x.clone().dtype(), d != x.to(torch::kInt64).dtype(), " ", c10::typeMetaToScalarType(d), " ",
                  c10::scalarTypeToTypeMeta(torch::kInt16), " ", d.toScalarType(), " ", d.isScalarType(torch::kFloat),
                  d.isScalarType(torch::kHalf), d.isScalarType());
}

// x.to's overloads, factories given a TypeMeta, (values, indices) along a dimension,
// and the operations models leave to PyTorch beside a fused kernel.
std::vector<torch::Tensor> more_ops(torch::Tensor x, int64_t dim) {  // x: 2 x 3 x 4, float
  auto img = x.unsqueeze(0);                                            // 1 x 2 x 3 x 4
  auto vol = img.unsqueeze(-1);                                         // 1 x 2 x 3 x 4 x 1
  auto [low, low_at] = x.min(dim);
  std::vector<torch::Tensor> out = {
      x.to(x.options()), x.to(torch::kDouble, false, true), x.to(x.device(), torch::kHalf),
      x.to(x.to(torch::kInt32)), x.to(torch::kCPU), x.to(torch::dtype(torch::kFloat64)), x.to(x.to(torch::kInt16).dtype()),
      x.to(torch::TensorOptions().dtype(x.to(torch::kBFloat16).dtype())), torch::empty({2}, x.dtype()).fill_(1),
      torch::zeros({2}, torch::TensorOptions().dtype(x.to(torch::kInt64).dtype()).device(x.device())),
      torch::ones({2}, torch::dtype(x.to(torch::kInt8).dtype())), torch::full({2}, 3, at::device(x.device()).dtype(x.dtype())),
      std::get<0>(x.max(dim)), std::get<1>(x.max(dim, true)), low, low_at,
      torch::conv1d(x, torch::ones({2, 3, 2}) / 6), torch::conv1d(x, torch::ones({2, 3, 3}) / 9, torch::ones({2}), 1, "same"),
      torch::conv1d(x, torch::ones({3, 1, 2}), {}, 2, 1, 1, 3), torch::conv3d(vol, torch::ones({2, 2, 1, 2, 1}) / 4),
      torch::conv3d(vol, torch::ones({2, 2, 1, 3, 1}), torch::ones({2}), 1, "same"),
      torch::conv3d(vol, torch::ones({4, 1, 2, 2, 1}), {}, {1, 2, 1}, {1, 0, 0}, 1, 2),
      torch::conv_transpose1d(x, torch::ones({3, 2, 2}) / 4),
      torch::conv_transpose1d(x, torch::ones({3, 2, 2}), torch::ones({2}), 2, 1, 1, 1, 1),
      torch::conv_transpose3d(vol, torch::ones({2, 1, 1, 2, 1}) / 2),
      torch::conv_transpose3d(vol, torch::ones({2, 3, 2, 1, 1}), torch::ones({3}), {2, 1, 1}, 0, {1, 0, 0}),
      torch::max_pool2d(img, 2), torch::max_pool2d(img, {2, 2}, {1, 2}, 1, 1, true), torch::avg_pool2d(img, 2),
      torch::avg_pool2d(img, {3, 3}, 1, 1, false, false, 2), torch::adaptive_avg_pool2d(img, {2, 2}),
      torch::batch_norm(img, torch::ones({2}) * 2, torch::ones({2}), torch::zeros({2}), torch::ones({2}) * 4, false, 0.1,
                        1e-5, false),
      torch::batch_norm(img, {}, {}, {}, {}, true, 0.1, 1e-5, true), torch::layer_norm(x, {4}),
      torch::layer_norm(x, {3, 4}, torch::ones({3, 4}) * 2, torch::ones({3, 4}), 1e-3), torch::group_norm(img, 2),
      torch::group_norm(img, 1, torch::ones({2}) * 3, torch::ones({2}), 1e-3, false), torch::gelu(x),
      torch::gelu(x, "tanh")};
  auto running_mean = torch::zeros({2});
  auto running_var = torch::ones({2});
  out.push_back(at::batch_norm(img, {}, {}, running_mean, running_var, true, 0.5, 1e-5, true));
  out.push_back(running_mean);
  out.push_back(running_var);
  return out;
}

// Keyword arguments and defaults (py::arg), bound below.
torch::Tensor scaled(torch::Tensor x, double scale, c10::optional<torch::Tensor> bias) {
  return bias.has_value() ? x * scale + *bias : x * scale;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "the lite names";
  m.def("accessed", &accessed);
  m.def("scaled", &scaled, "x * scale (+ bias)", py::arg("x"), py::arg("scale") = 2.0,
        py::arg("bias") = py::none());
  m.def("describe", &describe);
  m.def("make", &make);
  m.def("shape_ops", &shape_ops);
  m.def("data_of", &data_of);
  m.def("fail", &fail);
  m.def("maybe", &maybe);
  m.def("mixed", &mixed, "a tuple");
  m.def("ints", &ints);
  m.def("fail_wrapped", torch::wrap_pybind_function(fail), "fail, bound as load_inline binds it");
  m.def("ops", &ops);
  m.def("fail_as", &fail_as);
  m.def("lists", &lists);
  m.def("acc", &acc);
  m.def("dtypes", &dtypes);
  m.def("more_ops", &more_ops);
}
