#include "engine/output_layout.h"

#include <gtest/gtest.h>

#include "check/testing/tensor_file_writer.h"

namespace kvault {
namespace {

using kvault::testing::TensorFileWriter;

TEST(OutputLayout, KeepsTheTreeDtypesAndShapesButNoValues) {
  TensorFileWriter w;
  Json a = w.Add<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Json b = w.AddHalf({}, {7.5f});
  w.SetTree(Json{{"kind", "tuple"}, {"items", Json::array({a, b})}});
  auto f = TensorFile::FromBytes(w.Bytes());
  ASSERT_TRUE(f) << f.error();
  Json layout = OutputLayout(*f);
  EXPECT_EQ(layout["tree"], f->tree());
  ASSERT_EQ(layout["tensors"].size(), 2u);
  EXPECT_EQ(layout["tensors"][0], (Json{{"dtype", "float32"}, {"shape", {2, 3}}}));
  EXPECT_EQ(layout["tensors"][1]["dtype"], "float16");
  EXPECT_TRUE(layout["tensors"][1]["shape"].is_array());
  EXPECT_TRUE(layout["tensors"][1]["shape"].empty());
  EXPECT_EQ(layout.dump().find("7.5"), std::string::npos);
  EXPECT_EQ(layout["tensors"][0].size(), 2u);  // no strides, offsets or device
}

}  // namespace
}  // namespace kvault
