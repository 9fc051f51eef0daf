#include "engine/constant_control.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "check/testing/tensor_file_writer.h"

namespace kvault {
namespace {

TensorFile Floats(const std::vector<float>& values) {
  testing::TensorFileWriter w;
  w.Add<float>({static_cast<int64_t>(values.size())}, values);
  auto file = TensorFile::FromBytes(w.Bytes());
  EXPECT_TRUE(file) << file.error();
  return std::move(*file);
}

TEST(ConstantControl, ZerosAndNearZerosOverEveryRunAreDegenerate) {
  ConstantControl control;
  control.Add(Floats({0, 0, 0, 0}), Tolerance{});
  control.Add(Floats({0, 1e-6f, -2e-5f, 0}), Tolerance{});
  EXPECT_FALSE(control.Degenerate());  // two runs say nothing yet
  control.Add(Floats({3e-5f, 0, 0, 0}), Tolerance{});
  EXPECT_TRUE(control.Degenerate()) << control.Describe();
}

TEST(ConstantControl, OneConstantAwayFromZeroIsDegenerate) {
  ConstantControl control;
  for (int run = 0; run < 3; ++run) control.Add(Floats({2.5f, 2.5f, 2.5f}), Tolerance{});
  EXPECT_TRUE(control.Degenerate());
}

TEST(ConstantControl, ValuesThatVaryAreNot) {
  ConstantControl control;
  control.Add(Floats({0, 0.5f, 0}), Tolerance{});
  control.Add(Floats({0, 0, 0}), Tolerance{});
  control.Add(Floats({0, 0, 0}), Tolerance{});
  EXPECT_FALSE(control.Degenerate());
}

TEST(ConstantControl, AScalarThatChangesWithTheSeedIsNot) {
  ConstantControl control;
  control.Add(Floats({1.25f}), Tolerance{});
  control.Add(Floats({1.5f}), Tolerance{});
  control.Add(Floats({0.75f}), Tolerance{});
  EXPECT_FALSE(control.Degenerate());
}

TEST(ConstantControl, TheTaskToleranceDecides) {
  Tolerance loose;
  loose.atol = 0.1;
  loose.rtol = 0;
  ConstantControl control;
  for (float v : {0.f, 0.05f, 0.15f}) control.Add(Floats({v, 0.1f}), loose);
  EXPECT_TRUE(control.Degenerate()) << control.Describe();  // 0.075 +- 0.075
  ConstantControl strict;
  for (float v : {0.f, 0.05f, 0.15f}) strict.Add(Floats({v, 0.1f}), Tolerance{});
  EXPECT_FALSE(strict.Degenerate());
}

TEST(ConstantControl, NonFiniteValuesOrAnUnreadRunGiveNoVerdict) {
  ConstantControl nan;
  for (int run = 0; run < 3; ++run) nan.Add(Floats({0, run == 1 ? NAN : 0.f}), Tolerance{});
  EXPECT_FALSE(nan.Degenerate());
  ConstantControl unread;
  for (int run = 0; run < 3; ++run) unread.Add(Floats({0, 0}), Tolerance{});
  unread.Unknown();
  EXPECT_FALSE(unread.Degenerate());
}

}  // namespace
}  // namespace kvault
