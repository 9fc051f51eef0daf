#include "toolchain/torch_build_info.h"

#include <gtest/gtest.h>

namespace kvault {
namespace {

Json SampleBuild() {
  return Json::parse(R"({"include_paths":["/t/include","/t/include/torch/csrc/api/include"],
    "library_paths":["/t/lib"],"libraries":["c10","torch","torch_cpu","torch_python"],
    "cxx11_abi":false,"python_include":"/usr/include/python3.11",
    "ext_suffix":".cpython-311-x86_64-linux-gnu.so"})");
}

TEST(TorchBuildInfo, ReadsTheHelloBuildObject) {
  auto info = TorchBuildInfo::FromHello(SampleBuild());
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->include_paths.size(), 2u);
  EXPECT_EQ(info->library_paths, std::vector<std::string>{"/t/lib"});
  EXPECT_EQ(info->libraries.size(), 4u);
  EXPECT_FALSE(info->cxx11_abi);
  EXPECT_EQ(info->python_include, "/usr/include/python3.11");
  EXPECT_EQ(info->ext_suffix, ".cpython-311-x86_64-linux-gnu.so");
  EXPECT_EQ(info->torch_version, "");
}

TEST(TorchBuildInfo, DefaultsOptionalFields) {
  Json b = SampleBuild();
  b.erase("cxx11_abi");
  b.erase("ext_suffix");
  b["torch_version"] = "2.11.0+cu130";
  auto info = TorchBuildInfo::FromHello(b);
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_TRUE(info->cxx11_abi);
  EXPECT_EQ(info->cxx_standard, "c++17");
  EXPECT_EQ(info->torch_version, "2.11.0+cu130");
  b["cxx_standard"] = "c++20";
  EXPECT_EQ(TorchBuildInfo::FromHello(b)->cxx_standard, "c++20");
}

TEST(TorchBuildInfo, NamesTheBadField) {
  Json b = SampleBuild();
  b["include_paths"] = Json::array();
  EXPECT_NE(TorchBuildInfo::FromHello(b).error().find("include_paths"), std::string::npos);
  b = SampleBuild();
  b["libraries"] = Json::array({"c10", 3});
  EXPECT_NE(TorchBuildInfo::FromHello(b).error().find("libraries"), std::string::npos);
  b = SampleBuild();
  b.erase("python_include");
  EXPECT_NE(TorchBuildInfo::FromHello(b).error().find("python_include"), std::string::npos);
  b = SampleBuild();
  b["cxx11_abi"] = "yes";
  EXPECT_FALSE(TorchBuildInfo::FromHello(b).ok());
  b = SampleBuild();
  b["cxx_standard"] = "c++20 -fplugin=x.so";
  EXPECT_NE(TorchBuildInfo::FromHello(b).error().find("cxx_standard"), std::string::npos);
  EXPECT_FALSE(TorchBuildInfo::FromHello(Json::array()).ok());
}

TEST(TorchBuildInfo, TakesTheVersionFromTheWholeResponse) {
  Json hello{{"ok", true}, {"torch", "1.13.1"}, {"build", SampleBuild()}};
  auto info = TorchBuildInfo::FromHelloResponse(hello);
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->torch_version, "1.13.1");
  EXPECT_FALSE(TorchBuildInfo::FromHelloResponse(Json{{"ok", true}}).ok());
}

}  // namespace
}  // namespace kvault
