#include "check/tensor_file.h"

#include <gtest/gtest.h>

#include <random>

#include "check/testing/tensor_file_writer.h"
#include "util/files.h"

namespace kvault {
namespace {

using namespace kvault::testing;  // NOLINT: test-only node helpers

// Expects FromBytes to fail with a message containing `needle`.
void ExpectRejected(const std::string& bytes, const std::string& needle) {
  auto f = TensorFile::FromBytes(bytes, "t.kvt");
  ASSERT_FALSE(f) << "accepted; expected: " << needle;
  EXPECT_NE(f.error().find(needle), std::string::npos) << f.error();
  EXPECT_TRUE(f.error().starts_with("t.kvt: ")) << f.error();
}

std::string WithHeader(const Json& header, std::string_view data = std::string(64, '\0')) {
  return AssembleTensorFile(header.dump(), data);
}

Json OneTensorHeader(Json tensor_fields) {
  Json t = {{"dtype", "float32"}, {"shape", {2}}, {"strides", {1}}, {"device", "cpu"},
            {"offset", 0}, {"nbytes", 8}};
  if (tensor_fields.is_object()) t.update(tensor_fields);
  return {{"version", 1}, {"tree", TensorNode(0)}, {"tensors", {t}}};
}

TEST(TensorFileTest, ReadsEveryDtypeAndTheTree) {
  TensorFileWriter w;
  Json f64 = w.Add<double>({2}, {1.5, -2.5});
  Json f32 = w.Add<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Json f16 = w.AddHalf({1}, {0.5f});
  Json bf16 = w.AddBFloat16({1}, {-4.0f});
  Json i64 = w.Add<int64_t>({1}, {int64_t{1} << 40});
  Json i32 = w.Add<int32_t>({1}, {-7});
  Json i16 = w.Add<int16_t>({1}, {300});
  Json i8 = w.Add<int8_t>({1}, {-8});
  Json u8 = w.Add<uint8_t>({1}, {200});
  Json b = w.AddBool({2}, {true, false});
  w.SetTree(TupleNode({f64, ListNode({f32, f16}), DictNode({{"b", bf16}, {"x", IntNode(3)}}),
                       i64, i32, i16, i8, u8, b, FloatNode(NAN), BoolNode(true), NoneNode(),
                       StrNode("s"), UnsupportedNode("tensor:complex64")}));
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir);
  ASSERT_TRUE(w.WriteTo(dir->Join("a.kvt")));
  auto f = TensorFile::Open(dir->Join("a.kvt"));
  ASSERT_TRUE(f) << f.error();
  ASSERT_EQ(f->num_tensors(), 10u);
  const TensorInfo& t = f->tensor(1);
  EXPECT_EQ(t.dtype, DType::kFloat32);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.strides, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(t.device, "cpu");
  EXPECT_EQ(t.numel, 6);
  EXPECT_EQ(t.nbytes, 24u);
  EXPECT_EQ(t.offset % 64, 0u);
  EXPECT_EQ(ElementAsDouble(t.dtype, t.data, 5), 6.0);
  EXPECT_EQ(ElementAsDouble(DType::kFloat64, f->tensor(0).data, 1), -2.5);
  EXPECT_EQ(ElementAsDouble(DType::kFloat16, f->tensor(2).data, 0), 0.5);
  EXPECT_EQ(ElementAsDouble(DType::kBFloat16, f->tensor(3).data, 0), -4.0);
  EXPECT_EQ(ElementAsDouble(DType::kInt64, f->tensor(4).data, 0), std::ldexp(1.0, 40));
  EXPECT_EQ(ElementAsDouble(DType::kUInt8, f->tensor(8).data, 0), 200.0);
  EXPECT_EQ(f->tree()["kind"], "tuple");
  EXPECT_EQ(f->tree()["items"][2]["keys"][1], "x");
  // Moving keeps tensor data valid.
  TensorFile moved = std::move(*f);
  EXPECT_EQ(ElementAsDouble(DType::kFloat32, moved.tensor(1).data, 0), 1.0);
}

TEST(TensorFileTest, ZeroDimAndEmptyTensors) {
  TensorFileWriter w;
  w.Add<float>({}, {42.0f});
  w.Add<float>({0, 5}, {});
  auto f = TensorFile::FromBytes(w.Bytes());
  ASSERT_TRUE(f) << f.error();
  EXPECT_EQ(f->tensor(0).numel, 1);
  EXPECT_EQ(ElementAsDouble(DType::kFloat32, f->tensor(0).data, 0), 42.0);
  EXPECT_EQ(f->tensor(1).numel, 0);
  EXPECT_EQ(f->tensor(1).data, nullptr);
}

TEST(TensorFileTest, NoTensorsNoData) {
  // A header with no tensors may end the file without padding.
  std::string header = Json{{"version", 1}, {"tree", IntNode(3)}, {"tensors", Json::array()}}.dump();
  std::string bytes = "KVTENS01";
  uint64_t len = header.size();
  bytes.append(reinterpret_cast<const char*>(&len), 8);
  bytes += header;
  auto f = TensorFile::FromBytes(bytes);
  ASSERT_TRUE(f) << f.error();
  EXPECT_EQ(f->num_tensors(), 0u);
}

TEST(TensorFileTest, MissingFileNamesPath) {
  auto f = TensorFile::Open("/nonexistent/out.kvt");
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().find("/nonexistent/out.kvt"), std::string::npos);
}

TEST(TensorFileTest, RejectsBadPreamble) {
  ExpectRejected("", "truncated: 0 bytes");
  ExpectRejected("KVTENS01\x01", "truncated: 9 bytes");
  ExpectRejected(AssembleTensorFile("{}", "", "KVTENS02"), "bad magic");
  ExpectRejected(AssembleTensorFile("{}", "", "PK\x03\x04xxxx"), "bad magic");
  std::string huge_len = "KVTENS01";
  huge_len += std::string("\xff\xff\xff\xff\xff\xff\xff\xff", 8);
  ExpectRejected(huge_len + "{}", "does not fit");
  std::string short_len = AssembleTensorFile(std::string(100, ' '), "");
  ExpectRejected(short_len.substr(0, 50), "header of 100 bytes does not fit in the 50-byte file");
}

TEST(TensorFileTest, RejectsBadHeader) {
  ExpectRejected(AssembleTensorFile("{not json", ""), "header is not valid JSON");
  ExpectRejected(AssembleTensorFile("[1, 2]", ""), "not a JSON object");
  ExpectRejected(AssembleTensorFile("\"\xff\xfe\"", ""), "header is not valid JSON");
  ExpectRejected(WithHeader({{"tree", NoneNode()}, {"tensors", Json::array()}}), "unsupported version (missing)");
  ExpectRejected(WithHeader({{"version", 2}, {"tree", NoneNode()}, {"tensors", Json::array()}}), "unsupported version 2");
  ExpectRejected(WithHeader({{"version", 1}, {"tree", NoneNode()}}), "no tensors array");
  ExpectRejected(WithHeader({{"version", 1}, {"tensors", Json::array()}}), "no tree");
}

TEST(TensorFileTest, RejectsBadTensorEntries) {
  ExpectRejected(WithHeader(OneTensorHeader({{"dtype", "complex64"}})), "tensors[0]: unknown dtype 'complex64'");
  ExpectRejected(WithHeader(OneTensorHeader({{"dtype", 3}})), "dtype missing");
  ExpectRejected(WithHeader(OneTensorHeader({{"shape", {-2}}, {"strides", {1}}})), "not a non-negative integer");
  ExpectRejected(WithHeader(OneTensorHeader({{"shape", {2.0}}})), "not a non-negative integer");
  ExpectRejected(WithHeader(OneTensorHeader({{"shape", "2"}})), "shape missing");
  ExpectRejected(WithHeader(OneTensorHeader({{"strides", {1, 1}}})), "strides missing or not an array as long as shape");
  ExpectRejected(WithHeader(OneTensorHeader({{"device", nullptr}})), "device missing");
  ExpectRejected(WithHeader(OneTensorHeader({{"offset", -64}})), "offset and nbytes must be non-negative integers");
  ExpectRejected(WithHeader(OneTensorHeader({{"nbytes", 12}})), "nbytes 12 != 2 elements * 4 bytes");
  ExpectRejected(WithHeader(OneTensorHeader({{"offset", 8}})), "offset 8 is not a multiple of 64");
  ExpectRejected(WithHeader(OneTensorHeader({{"offset", 64}})), "lie outside the 64-byte data section");
  ExpectRejected(WithHeader(OneTensorHeader({}), ""), "lie outside the 0-byte data section");
  ExpectRejected(WithHeader(OneTensorHeader({{"offset", uint64_t{1} << 63}})), "lie outside");
  ExpectRejected(WithHeader(OneTensorHeader({{"offset", 18446744073709551552ull}})), "lie outside");
}

TEST(TensorFileTest, RejectsShapeOverflow) {
  // Product overflows 64 bits.
  ExpectRejected(WithHeader(OneTensorHeader({{"shape", {int64_t{1} << 32, int64_t{1} << 32, 2}},
                                             {"strides", {0, 0, 0}}})),
                 "more elements than fit in 64 bits");
  // Element count fits, byte count does not.
  ExpectRejected(WithHeader(OneTensorHeader({{"shape", {int64_t{1} << 62}}})), "too large for 64-bit byte counts");
  // Fits, but a wrapped nbytes cannot sneak through: 2^61 float32 = 2^63 bytes.
  ExpectRejected(WithHeader(OneTensorHeader({{"shape", {int64_t{1} << 61}}, {"nbytes", uint64_t{1} << 63}})),
                 "lie outside");
  // A dimension beyond int64.
  ExpectRejected(WithHeader(OneTensorHeader({{"shape", {uint64_t{1} << 63}}})), "not a non-negative integer");
}

TEST(TensorFileTest, RejectsTruncatedData) {
  TensorFileWriter w;
  w.Add<float>({100}, std::vector<float>(100, 1.0f));
  std::string bytes = w.Bytes();
  ExpectRejected(bytes.substr(0, bytes.size() - 1), "lie outside the 399-byte data section");
  ASSERT_TRUE(TensorFile::FromBytes(bytes));
}

TEST(TensorFileTest, RejectsBadTrees) {
  auto with_tree = [](Json tree) {
    TensorFileWriter w;
    w.Add<float>({1}, {1.0f});
    w.SetTree(std::move(tree));
    return w.Bytes();
  };
  ExpectRejected(with_tree(TensorNode(1)), "tree: tensor index 1 is not below 1");
  ExpectRejected(with_tree(TupleNode({NoneNode(), TensorNode(-1)})), "tree[1]: tensor index -1");
  ExpectRejected(with_tree(Json{{"kind", "tensor"}}), "tensor index missing");
  ExpectRejected(with_tree(Json{{"kind", "set"}}), "unknown node kind 'set'");
  ExpectRejected(with_tree(Json{{"value", 1}}), "node has no kind");
  ExpectRejected(with_tree(Json::array()), "node is not an object");
  ExpectRejected(with_tree(Json{{"kind", "tuple"}}), "tuple without an items array");
  ExpectRejected(with_tree(Json{{"kind", "dict"}, {"keys", {"a"}}, {"items", Json::array()}}), "not as many as items");
  ExpectRejected(with_tree(Json{{"kind", "dict"}, {"keys", {1}}, {"items", {NoneNode()}}}), "dict key is not a string");
  ExpectRejected(with_tree(DictNode({{"k", Json{{"kind", "int"}, {"value", 1.5}}}})), "tree['k']: int node without an integer");
  ExpectRejected(with_tree(Json{{"kind", "float"}, {"value", "NaN"}}), "float node without a number");
  ExpectRejected(with_tree(Json{{"kind", "bool"}, {"value", 1}}), "bool node without a boolean");
  ExpectRejected(with_tree(Json{{"kind", "str"}}), "str node without a string");
  ExpectRejected(with_tree(Json{{"kind", "unsupported"}}), "unsupported node without a type");
}

Json Nested(int depth) {
  Json node = TensorNode(0);
  for (int i = 1; i < depth; ++i) node = ListNode({node});
  return node;
}

TEST(TensorFileTest, TreeDepthIsBounded) {
  TensorFileWriter ok;
  ok.Add<float>({1}, {1.0f});
  ok.SetTree(Nested(kMaxTensorTreeDepth));
  EXPECT_TRUE(TensorFile::FromBytes(ok.Bytes()));
  TensorFileWriter deep;
  deep.Add<float>({1}, {1.0f});
  deep.SetTree(Nested(kMaxTensorTreeDepth + 1));
  ExpectRejected(deep.Bytes(), "tree nested deeper than 64 levels");
  // A million levels of raw JSON must be refused before any recursive parsing.
  std::string header = "{\"version\":1,\"tensors\":[],\"tree\":" + std::string(1000000, '[');
  ExpectRejected(AssembleTensorFile(header, ""), "nested deeper than 64 levels");
}

TEST(TensorFileTest, EveryTruncationAndByteFlipIsHandled) {
  TensorFileWriter w;
  Json a = w.Add<float>({3}, {1, 2, 3});
  Json b = w.AddHalf({2}, {1, 2});
  w.SetTree(DictNode({{"a", a}, {"b", ListNode({b, FloatNode(1.5)})}}));
  std::string bytes = w.Bytes();
  ASSERT_TRUE(TensorFile::FromBytes(bytes));
  for (size_t len = 0; len < bytes.size(); ++len) {
    EXPECT_FALSE(TensorFile::FromBytes(bytes.substr(0, len))) << len;  // the last tensor ends the file
  }
  std::mt19937 rng(7);
  for (int trial = 0; trial < 5000; ++trial) {
    std::string corrupt = bytes;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) corrupt[rng() % corrupt.size()] = static_cast<char>(rng());
    auto f = TensorFile::FromBytes(corrupt);
    if (f) {  // whatever was accepted must be internally consistent
      for (size_t i = 0; i < f->num_tensors(); ++i) {
        const TensorInfo& t = f->tensor(i);
        EXPECT_EQ(t.nbytes, static_cast<uint64_t>(t.numel) * DTypeSize(t.dtype));
      }
    }
  }
}

}  // namespace
}  // namespace kvault
