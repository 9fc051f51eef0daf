#include "toolchain/backend.h"

#include <gtest/gtest.h>

#include <string>

namespace kvault {
namespace {

TEST(Backend, RoundTripsThroughStrings) {
  for (Backend b : {Backend::kCpu, Backend::kCuda, Backend::kHip}) {
    auto back = BackendFromString(ToString(b));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, b);
  }
  for (Language l : {Language::kCpp, Language::kCuda, Language::kHip}) {
    auto back = LanguageFromString(ToString(l));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, l);
  }
  EXPECT_EQ(ToString(Backend::kHip), "hip");
  EXPECT_EQ(ToString(Language::kCpp), "cpp");
}

TEST(Backend, RejectsUnknownNames) {
  auto b = BackendFromString("rocm");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().find("rocm"), std::string::npos);
  EXPECT_FALSE(LanguageFromString("c++").ok());
}

TEST(Language, FromFileExtension) {
  EXPECT_EQ(*LanguageFromPath("/a/b/relu.cpp"), Language::kCpp);
  EXPECT_EQ(*LanguageFromPath("relu.cc"), Language::kCpp);
  EXPECT_EQ(*LanguageFromPath("relu.cxx"), Language::kCpp);
  EXPECT_EQ(*LanguageFromPath("/x.y/relu.cu"), Language::kCuda);
  EXPECT_EQ(*LanguageFromPath("relu.hip"), Language::kHip);
  EXPECT_FALSE(LanguageFromPath("relu.py").ok());
  EXPECT_FALSE(LanguageFromPath("/dir.cu/relu").ok());
}

}  // namespace
}  // namespace kvault
