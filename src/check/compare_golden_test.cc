// Compare against the golden vectors of tests/golden/compare.json, which the device
// comparison (python/kvault_worker/handoff.py compare_tensor) is held to as well.
#include <gtest/gtest.h>

#include "check/compare.h"
#include "check/testing/golden.h"
#include "check/testing/tensor_file_writer.h"

namespace kvault {
namespace {

using testing::GoldenNear;
using testing::GoldenNumber;

// A golden value list: plain, or {"repeat": [...], "times": n, "set": [[i, v], ...]}.
std::vector<Json> Expand(const Json& spec) {
  if (spec.is_array()) return spec.get<std::vector<Json>>();
  std::vector<Json> out;
  for (int t = 0; t < spec.value("times", 0); ++t)
    for (const Json& v : spec["repeat"]) out.push_back(v);
  for (const Json& kv : spec.value("set", Json::array())) out.at(kv[0].get<size_t>()) = kv[1];
  return out;
}

// A file holding one tensor of `dtype` with the values of `spec`.
TensorFile OneTensor(const std::string& dtype, const Json& spec) {
  const std::vector<Json> values = Expand(spec);
  const std::vector<int64_t> shape{static_cast<int64_t>(values.size())};
  testing::TensorFileWriter w;
  auto doubles = [&] {
    std::vector<double> d;
    for (const Json& v : values) d.push_back(GoldenNumber(v));
    return d;
  };
  auto floats = [&] {
    std::vector<float> f;
    for (double d : doubles()) f.push_back(static_cast<float>(d));
    return f;
  };
  auto ints = [&]<class T>(T) {
    std::vector<T> i;
    for (const Json& v : values) i.push_back(v.get<T>());
    return i;
  };
  Json node;
  if (dtype == "float64")
    node = w.Add<double>(shape, doubles());
  else if (dtype == "float32")
    node = w.Add<float>(shape, floats());
  else if (dtype == "float16")
    node = w.AddHalf(shape, floats());
  else if (dtype == "bfloat16")
    node = w.AddBFloat16(shape, floats());
  else if (dtype == "int64")
    node = w.Add<int64_t>(shape, ints(int64_t{}));
  else if (dtype == "int32")
    node = w.Add<int32_t>(shape, ints(int32_t{}));
  else if (dtype == "bool") {
    std::vector<bool> b;
    for (const Json& v : values) b.push_back(v.get<int>() != 0);
    node = w.AddBool(shape, b);
  } else {
    ADD_FAILURE() << "no golden dtype " << dtype;
  }
  w.SetTree(node);
  auto file = TensorFile::FromBytes(w.Bytes());
  EXPECT_TRUE(file) << file.error();
  return std::move(*file);
}

TEST(CompareGoldenTest, EveryVectorGivesItsStatistics) {
  testing::ForEachGolden("compare.json", "vectors", 10, [](const Json& g) {
    const std::string dtype = g["dtype"];
    Tolerance tol;
    tol.rtol = g["rtol"].get<double>();
    tol.atol = g["atol"].get<double>();
    tol.nan_policy =
        g["nan_policy"] == "forbid" ? Tolerance::NanPolicy::kForbid : Tolerance::NanPolicy::kMatch;
    const CompareReport r = Compare(OneTensor(dtype, g["reference"]), OneTensor(dtype, g["candidate"]), tol);
    const Json& want = g["expected"];
    EXPECT_EQ(r.match, want["match"].get<bool>()) << r.message;
    EXPECT_EQ(r.compared, want["compared"].get<int64_t>());
    EXPECT_EQ(r.mismatched, want["mismatched"].get<int64_t>());
    EXPECT_PRED2(GoldenNear, GoldenNumber(want["max_abs"]), r.max_abs_error);
    EXPECT_PRED2(GoldenNear, GoldenNumber(want["max_rel"]), r.max_rel_error);
  });
}

}  // namespace
}  // namespace kvault
