#include "check/compare.h"

#include <gtest/gtest.h>

#include <ctime>
#include <cmath>

#include "check/testing/tensor_file_writer.h"

namespace kvault {
namespace {

using namespace kvault::testing;  // NOLINT: test-only node helpers

TensorFile Load(const TensorFileWriter& w) {
  auto f = TensorFile::FromBytes(w.Bytes());
  EXPECT_TRUE(f) << f.error();
  return std::move(*f);
}

// Builds single-tensor files (the tree is the tensor itself, path "output").
template <class T>
TensorFile One(std::vector<int64_t> shape, std::vector<T> values) {
  TensorFileWriter w;
  w.SetTree(w.Add<T>(std::move(shape), values));
  return Load(w);
}

TensorFile Tree(Json tree) {
  TensorFileWriter w;
  w.SetTree(std::move(tree));
  return Load(w);
}

CompareReport Cmp(const TensorFile& r, const TensorFile& c, Tolerance tol = {}) { return Compare(r, c, tol); }

TEST(CompareTest, IdenticalFloatsMatch) {
  auto r = One<float>({2, 2}, {1, 2, 3, 4});
  CompareReport rep = Cmp(r, r);
  EXPECT_TRUE(rep.match) << rep.message;
  EXPECT_EQ(rep.compared, 4);
  EXPECT_EQ(rep.mismatched, 0);
  EXPECT_EQ(rep.max_abs_error, 0);
  EXPECT_EQ(rep.message, "4 elements match (max abs err 0, max rel err 0)");
}

TEST(CompareTest, MismatchMessageNamesWorstElement) {
  auto r = One<float>({2, 2}, {1, 2, 3, 4});
  auto c = One<float>({2, 2}, {1, 2.00001f, 3, 4.5f});
  CompareReport rep = Cmp(r, c);
  EXPECT_FALSE(rep.match);
  EXPECT_EQ(rep.mismatched, 1);
  EXPECT_EQ(rep.compared, 4);
  EXPECT_EQ(rep.message,
            "output: 1 of 4 elements differ beyond rtol=0.0001 atol=0.0001; worst at [1, 1]: "
            "got 4.5, expected 4.0 (abs err 0.5, rel err 0.125)");
  EXPECT_EQ(rep.worst_path, "output");
  EXPECT_EQ(rep.worst_index, (std::vector<int64_t>{1, 1}));
  EXPECT_DOUBLE_EQ(rep.max_abs_error, 0.5);
  EXPECT_DOUBLE_EQ(rep.max_rel_error, 0.125);
}

TEST(CompareTest, ToleranceBoundary) {
  // |c - r| <= atol + rtol * |r|: 100 +- (0.0001 + 0.01) passes, a bit more fails.
  auto r = One<double>({1}, {100.0});
  EXPECT_TRUE(Cmp(r, One<double>({1}, {100.0101})).match);
  EXPECT_FALSE(Cmp(r, One<double>({1}, {100.0102})).match);
  Tolerance loose;
  loose.rtol = 0.1;
  EXPECT_TRUE(Cmp(r, One<double>({1}, {109.0}), loose).match);  // atol keeps its default
  loose.atol = 0;
  loose.rtol = 0;
  EXPECT_FALSE(Cmp(r, One<double>({1}, {100.0000001}), loose).match);
}

TEST(CompareTest, AtolByRmsFollowsTheOutputsScale) {
  // A long fp32 reduction on signed inputs: where large terms cancel, the output near
  // zero carries their rounding (an H100 matmul: 0.17765 for 0.17783).
  auto r = One<float>({4}, {100, -100, 0.17783f, 50});
  auto c = One<float>({4}, {100, -100, 0.17765f, 50});
  EXPECT_FALSE(Cmp(r, c).match);
  Tolerance scaled;
  scaled.atol_by_rms = true;
  CompareReport rep = Cmp(r, c, scaled);
  EXPECT_TRUE(rep.match) << rep.message;
  // An error of the output's own scale still fails, and says which atol it was held to.
  rep = Cmp(r, One<float>({4}, {100, -100, 5, 50}), scaled);
  EXPECT_FALSE(rep.match);
  EXPECT_NE(rep.message.find("atol=0.0075"), std::string::npos) << rep.message;  // 1e-4 x RMS 75
  // Outputs of RMS below 1 keep the absolute tolerance.
  auto small = One<float>({2}, {0.5f, 0.25f});
  EXPECT_FALSE(Cmp(small, One<float>({2}, {0.5002f, 0.25f}), scaled).match);
}

TEST(CompareTest, WorstWhenAllMatchIsLargestError) {
  auto r = One<float>({3}, {1, 2, 3});
  auto c = One<float>({3}, {1.00001f, 2, 3.00002f});
  CompareReport rep = Cmp(r, c);
  EXPECT_TRUE(rep.match);
  EXPECT_EQ(rep.worst_index, (std::vector<int64_t>{2}));
  EXPECT_NEAR(rep.max_abs_error, 2e-5, 1e-6);
}

TEST(CompareTest, ShapeAndDtypeMustBeEqual) {
  TensorFileWriter rw, cw;
  rw.SetTree(TupleNode({rw.Add<float>({1}, {0}), rw.Add<float>({4, 9}, std::vector<float>(36))}));
  cw.SetTree(TupleNode({cw.Add<float>({1}, {0}), cw.Add<float>({4, 8}, std::vector<float>(32))}));
  CompareReport rep = Cmp(Load(rw), Load(cw));
  EXPECT_FALSE(rep.match);
  EXPECT_EQ(rep.message, "output[1]: shape [4, 8] != reference [4, 9]");
  // Same element count, different shape.
  EXPECT_FALSE(Cmp(One<float>({2, 3}, std::vector<float>(6)), One<float>({3, 2}, std::vector<float>(6))).match);
  CompareReport dt = Cmp(One<float>({1}, {1}), One<double>({1}, {1}));
  EXPECT_EQ(dt.message, "output: dtype float64 != reference float32");
}

TEST(CompareTest, HalfPrecisionDefaults) {
  TensorFileWriter rw, cw;
  rw.SetTree(rw.AddHalf({2}, {1.0f, 100.0f}));
  cw.SetTree(cw.AddHalf({2}, {1.0078125f, 100.5f}));  // within 1e-2 + 1e-2 * |r|
  EXPECT_TRUE(Cmp(Load(rw), Load(cw)).match);
  TensorFileWriter bw;
  bw.SetTree(bw.AddHalf({2}, {1.0f, 102.0f}));
  CompareReport rep = Cmp(Load(rw), Load(bw));
  EXPECT_FALSE(rep.match);
  EXPECT_EQ(rep.message,
            "output: 1 of 2 elements differ beyond rtol=0.01 atol=0.01; worst at [1]: got 102.0, "
            "expected 100.0 (abs err 2, rel err 0.02)");
  TensorFileWriter r16, c16;
  r16.SetTree(r16.AddBFloat16({1}, {256.0f}));
  c16.SetTree(c16.AddBFloat16({1}, {258.0f}));  // next bfloat16 value; 2 <= 0.01 + 2.56
  EXPECT_TRUE(Cmp(Load(r16), Load(c16)).match);
}

TEST(CompareTest, NanPolicyMatch) {
  const float nan = NAN, inf = INFINITY;
  auto r = One<float>({4}, {nan, inf, -inf, 1});
  EXPECT_TRUE(Cmp(r, One<float>({4}, {nan, inf, -inf, 1})).match);
  CompareReport a = Cmp(r, One<float>({4}, {1, inf, -inf, 1}));
  EXPECT_FALSE(a.match);
  EXPECT_EQ(a.message,
            "output: 1 of 4 elements differ beyond rtol=0.0001 atol=0.0001; worst at [0]: got 1.0, "
            "expected nan (nan_policy=match)");
  EXPECT_FALSE(Cmp(r, One<float>({4}, {nan, -inf, -inf, 1})).match);  // wrong-signed infinity
  EXPECT_FALSE(Cmp(r, One<float>({4}, {nan, 3e38f, -inf, 1})).match);  // finite for infinite
  CompareReport b = Cmp(r, One<float>({4}, {nan, inf, -inf, nan}));
  EXPECT_FALSE(b.match);
  EXPECT_EQ(b.worst_index, (std::vector<int64_t>{3}));
  // Matching non-finite pairs do not disturb the error statistics.
  EXPECT_EQ(Cmp(r, r).max_abs_error, 0);
}

TEST(CompareTest, NanPolicyForbid) {
  Tolerance forbid;
  forbid.nan_policy = Tolerance::NanPolicy::kForbid;
  auto r = One<float>({2}, {NAN, 1});
  CompareReport rep = Cmp(r, r, forbid);
  EXPECT_FALSE(rep.match);
  EXPECT_EQ(rep.mismatched, 1);
  EXPECT_NE(rep.message.find("got nan, expected nan (nan_policy=forbid)"), std::string::npos) << rep.message;
  auto finite = One<float>({2}, {1, 1});
  EXPECT_TRUE(Cmp(finite, finite, forbid).match);
  EXPECT_FALSE(Cmp(finite, One<float>({2}, {1, INFINITY}), forbid).match);
}

TEST(CompareTest, NonFiniteViolationIsWorstOverLargeFiniteError) {
  auto r = One<double>({3}, {1, 2, 3});
  auto c = One<double>({3}, {1000, NAN, 3000});
  CompareReport rep = Cmp(r, c);
  EXPECT_EQ(rep.mismatched, 3);
  EXPECT_EQ(rep.worst_index, (std::vector<int64_t>{1}));
  EXPECT_DOUBLE_EQ(rep.max_abs_error, 2997);  // over finite pairs only
}

TEST(CompareTest, HalfNanAndInfBitPatterns) {
  TensorFileWriter rw, cw;
  rw.SetTree(rw.AddBits16(DType::kFloat16, {3}, {0x7E00, 0x7C00, 0xFC00}));
  cw.SetTree(cw.AddBits16(DType::kFloat16, {3}, {0x7C01, 0x7C00, 0xFC00}));  // another NaN payload
  EXPECT_TRUE(Cmp(Load(rw), Load(cw)).match);
  TensorFileWriter bw;
  bw.SetTree(bw.AddBits16(DType::kFloat16, {3}, {0x7E00, 0x7BFF, 0xFC00}));  // 65504 for inf
  CompareReport rep = Cmp(Load(rw), Load(bw));
  EXPECT_FALSE(rep.match);
  EXPECT_NE(rep.message.find("got 65504.0, expected inf"), std::string::npos) << rep.message;
  TensorFileWriter rb, cb;
  rb.SetTree(rb.AddBits16(DType::kBFloat16, {2}, {0x7FC0, 0xFF80}));
  cb.SetTree(cb.AddBits16(DType::kBFloat16, {2}, {0xFFC1, 0xFF80}));
  EXPECT_TRUE(Cmp(Load(rb), Load(cb)).match);
}

TEST(CompareTest, IntegersAndBoolsAreExact) {
  Tolerance loose;
  loose.atol = 10;
  auto r = One<int64_t>({5}, {1, 2, 3, 4, 5});
  EXPECT_TRUE(Cmp(r, One<int64_t>({5}, {1, 2, 3, 4, 5})).match);
  CompareReport rep = Cmp(r, One<int64_t>({5}, {1, 2, 6, 4, 4}), loose);
  EXPECT_FALSE(rep.match);
  EXPECT_EQ(rep.mismatched, 2);
  EXPECT_EQ(rep.message,
            "output: 2 of 5 elements differ (exact match required for int64); worst at [2]: got 6, "
            "expected 3 (abs err 3, rel err 1)");
  EXPECT_FALSE(Cmp(One<int32_t>({1}, {7}), One<int32_t>({1}, {8})).match);
  EXPECT_FALSE(Cmp(One<int16_t>({1}, {7}), One<int16_t>({1}, {-7})).match);
  EXPECT_FALSE(Cmp(One<int8_t>({1}, {7}), One<int8_t>({1}, {8})).match);
  EXPECT_FALSE(Cmp(One<uint8_t>({1}, {255}), One<uint8_t>({1}, {0})).match);
  TensorFileWriter rb, cb;
  rb.SetTree(rb.AddBool({2}, {true, false}));
  cb.SetTree(cb.AddBool({2}, {true, true}));
  CompareReport b = Cmp(Load(rb), Load(cb));
  EXPECT_FALSE(b.match);
  EXPECT_NE(b.message.find("got True, expected False"), std::string::npos) << b.message;
}

TEST(CompareTest, SequencesAndDicts) {
  TensorFileWriter rw, cw;
  Json ra = rw.Add<float>({1}, {1}), rb = rw.Add<float>({1}, {2});
  Json ca = cw.Add<float>({1}, {1}), cb = cw.Add<float>({1}, {2});
  rw.SetTree(TupleNode({DictNode({{"h", ra}, {"c", rb}}), IntNode(3)}));
  cw.SetTree(ListNode({DictNode({{"c", cb}, {"h", ca}}), IntNode(3)}));  // list for tuple, keys reordered
  CompareReport rep = Cmp(Load(rw), Load(cw));
  EXPECT_TRUE(rep.match) << rep.message;
  EXPECT_EQ(rep.compared, 2);

  EXPECT_EQ(Cmp(Tree(TupleNode({IntNode(1)})), Tree(TupleNode({IntNode(1), IntNode(2)}))).message,
            "output: 2 items != reference 1 items");
  EXPECT_EQ(Cmp(Tree(DictNode({{"a", NoneNode()}, {"b", NoneNode()}})),
                Tree(DictNode({{"a", NoneNode()}, {"c", NoneNode()}})))
                .message,
            "output: keys ['a', 'c'] != reference ['a', 'b']");
  EXPECT_EQ(Cmp(Tree(DictNode({{"a", NoneNode()}})), Tree(DictNode({{"a", NoneNode()}, {"b", NoneNode()}}))).message,
            "output: keys ['a', 'b'] != reference ['a']");
  // Keys that collided as strings compare by position.
  EXPECT_TRUE(Cmp(Tree(DictNode({{"1", IntNode(1)}, {"1", IntNode(2)}})),
                  Tree(DictNode({{"1", IntNode(1)}, {"1", IntNode(2)}})))
                  .match);
  EXPECT_FALSE(Cmp(Tree(DictNode({{"1", IntNode(1)}, {"1", IntNode(2)}})),
                   Tree(DictNode({{"1", IntNode(2)}, {"1", IntNode(1)}})))
                   .match);
}

TEST(CompareTest, KindMismatch) {
  TensorFileWriter rw;
  rw.SetTree(TupleNode({NoneNode(), rw.Add<float>({1}, {1})}));
  CompareReport rep = Cmp(Load(rw), Tree(TupleNode({NoneNode(), DictNode({})})));
  EXPECT_EQ(rep.message, "output[1]: kind dict != reference tensor");
  EXPECT_FALSE(Cmp(Tree(NoneNode()), Tree(IntNode(0))).match);
}

TEST(CompareTest, Scalars) {
  EXPECT_TRUE(Cmp(Tree(IntNode(3)), Tree(IntNode(3))).match);
  EXPECT_EQ(Cmp(Tree(IntNode(4)), Tree(IntNode(3))).message, "output: int 3 != reference 4");
  EXPECT_TRUE(Cmp(Tree(FloatNode(1.0)), Tree(FloatNode(1.00005))).match);
  EXPECT_EQ(Cmp(Tree(FloatNode(1.0)), Tree(FloatNode(1.5))).message,
            "output: float 1.5 != reference 1.0 (rtol=0.0001 atol=0.0001)");
  EXPECT_TRUE(Cmp(Tree(FloatNode(NAN)), Tree(FloatNode(NAN))).match);
  EXPECT_FALSE(Cmp(Tree(FloatNode(INFINITY)), Tree(FloatNode(-INFINITY))).match);
  Tolerance forbid;
  forbid.nan_policy = Tolerance::NanPolicy::kForbid;
  EXPECT_FALSE(Cmp(Tree(FloatNode(NAN)), Tree(FloatNode(NAN)), forbid).match);
  EXPECT_EQ(Cmp(Tree(BoolNode(false)), Tree(BoolNode(true))).message, "output: bool true != reference false");
  EXPECT_EQ(Cmp(Tree(StrNode("b")), Tree(StrNode("a"))).message, "output: str 'a' != reference 'b'");
  EXPECT_TRUE(Cmp(Tree(StrNode("a")), Tree(StrNode("a"))).match);
  EXPECT_TRUE(Cmp(Tree(NoneNode()), Tree(NoneNode())).match);
  EXPECT_FALSE(Cmp(Tree(IntNode(1)), Tree(FloatNode(1.0))).match);  // int vs float is a kind change
}

TEST(CompareTest, UnsupportedOnEitherSideIsMismatch) {
  auto u = Tree(TupleNode({UnsupportedNode("tensor:complex64")}));
  auto n = Tree(TupleNode({NoneNode()}));
  EXPECT_EQ(Cmp(n, u).message, "output[0]: the candidate returned an unsupported value (tensor:complex64)");
  EXPECT_EQ(Cmp(u, n).message, "output[0]: the reference holds an unsupported value (tensor:complex64)");
  EXPECT_FALSE(Cmp(u, u).match);
}

TEST(CompareTest, TotalsAndWorstAcrossTensors) {
  TensorFileWriter rw, cw;
  rw.SetTree(TupleNode({DictNode({{"h", rw.Add<float>({2}, {1, 1})}}), rw.Add<float>({2, 2}, {0, 0, 0, 0})}));
  cw.SetTree(TupleNode({DictNode({{"h", cw.Add<float>({2}, {1, 1.5f})}}), cw.Add<float>({2, 2}, {0, 0, 9, 9})}));
  CompareReport rep = Cmp(Load(rw), Load(cw));
  EXPECT_FALSE(rep.match);
  EXPECT_EQ(rep.compared, 6);
  EXPECT_EQ(rep.mismatched, 3);
  EXPECT_EQ(rep.worst_path, "output[1]");
  EXPECT_EQ(rep.worst_index, (std::vector<int64_t>{1, 0}));
  EXPECT_DOUBLE_EQ(rep.max_abs_error, 9);
  EXPECT_DOUBLE_EQ(rep.max_rel_error, 0.5);  // zero references have no relative error
  EXPECT_EQ(rep.message,
            "output[0]['h']: 1 of 2 elements differ beyond rtol=0.0001 atol=0.0001; worst at [1]: got 1.5, "
            "expected 1.0 (abs err 0.5, rel err 0.5); 2 more elements differ in other outputs");
}

TEST(CompareTest, EmptyAndZeroDim) {
  auto r = One<float>({0, 3}, {});
  CompareReport e = Cmp(r, r);
  EXPECT_TRUE(e.match);
  EXPECT_EQ(e.compared, 0);
  EXPECT_TRUE(e.worst_path.empty());
  CompareReport z = Cmp(One<float>({}, {1}), One<float>({}, {2}));
  EXPECT_FALSE(z.match);
  EXPECT_EQ(z.worst_index, std::vector<int64_t>{});
  EXPECT_NE(z.message.find("worst at []: got 2.0, expected 1.0"), std::string::npos) << z.message;
}

TEST(CompareTest, ResolveTolerance) {
  Tolerance t;
  EXPECT_EQ(ResolveTolerance(t, DType::kFloat32).rtol, 1e-4);
  EXPECT_EQ(ResolveTolerance(t, DType::kBFloat16).atol, 1e-2);
  EXPECT_EQ(ResolveTolerance(t, DType::kInt32).atol, 0);
  t.atol = 0.5;
  EXPECT_EQ(ResolveTolerance(t, DType::kFloat16).atol, 0.5);
  EXPECT_EQ(ResolveTolerance(t, DType::kFloat16).rtol, 1e-2);
  EXPECT_EQ(ResolveTolerance(t, DType::kInt64).atol, 0);
}

TEST(CompareTest, Throughput) {
  // 8 Mi float32 elements per side (32 MiB); reports the rate for the record.
  const int64_t n = int64_t{8} << 20;
  std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] = static_cast<float>(i % 1000) * 0.001f;
  b[n - 1] += 1;
  TensorFileWriter rw, cw;
  rw.SetTree(rw.Add<float>({n}, a));
  cw.SetTree(cw.Add<float>({n}, b));
  TensorFile r = Load(rw), c = Load(cw);
  std::clock_t start = std::clock();  // CPU time: wall time is noisy on shared machines
  CompareReport rep = Cmp(r, c);
  double s = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC + 1e-9;
  EXPECT_EQ(rep.mismatched, 1);
  EXPECT_EQ(rep.worst_index, (std::vector<int64_t>{n - 1}));
  std::printf("compared %lld float32 pairs in %.3f s CPU (%.2f GB/s of input)\n", static_cast<long long>(n), s,
              2.0 * n * 4 / s / 1e9);
}

}  // namespace
}  // namespace kvault
