#include "toolchain/tools.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "toolchain/fake_compiler_for_test.h"
#include "util/files.h"

namespace kvault {
namespace {

using testing::FakeCompiler;

class ToolsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    unsetenv("KVAULT_CXX");
    unsetenv("KVAULT_NVCC");
    unsetenv("KVAULT_HIPCC");
  }
};

TEST_F(ToolsTest, EnvironmentOverridesThePath) {
  setenv("KVAULT_NVCC", "/opt/custom/nvcc", 1);
  EXPECT_EQ(ToolPath(Tool::kNvcc), "/opt/custom/nvcc");
  setenv("KVAULT_NVCC", "", 1);  // empty counts as unset
  EXPECT_NE(ToolPath(Tool::kNvcc), "");
  EXPECT_EQ(ToolEnvVar(Tool::kHipcc), "KVAULT_HIPCC");
}

TEST_F(ToolsTest, ShortVersions) {
  EXPECT_EQ(ShortVersion(Tool::kNvcc,
                         "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88"),
            "13.0");
  EXPECT_EQ(ShortVersion(Tool::kCxx, "g++ (Debian 12.2.0-14+deb12u1) 12.2.0\nCopyright"), "12.2.0");
  EXPECT_EQ(ShortVersion(Tool::kHipcc, "HIP version: 5.2.21153-0\nDebian clang version 15.0.6"), "5.2.21153-0");
}

TEST_F(ToolsTest, IdentityDropsPythonTracebacks) {
  auto dir = TempDir::Create("", "kvault-tools");
  ASSERT_TRUE(dir.ok());
  std::string path = dir->Join("hipcc");
  ASSERT_TRUE(WriteFileAtomic(path,
                              "#!/bin/sh\necho 'Traceback (most recent call last):'\n"
                              "echo '  File \"/usr/bin/rocm_agent_enumerator\", line 257'\n"
                              "echo 'FileNotFoundError: no kfd'\necho 'HIP version: 5.2.21153-0'\n")
                  .ok());
  ::chmod(path.c_str(), 0755);
  auto id = ToolIdentity(path);
  ASSERT_TRUE(id.ok()) << id.error();
  EXPECT_EQ(*id, "HIP version: 5.2.21153-0");
}

TEST_F(ToolsTest, IdentityOfAMissingToolIsAnError) {
  EXPECT_FALSE(ToolIdentity("/no/such/compiler").ok());
}

TEST_F(ToolsTest, DiscoverReportsVersionsArchesAndMissingTools) {
  FakeCompiler cxx(FakeCompiler::kWritesOutput, "g++ (Fake) 12.2.0");
  FakeCompiler hipcc(FakeCompiler::kWritesOutput, "HIP version: 5.2.21153-0", "gfx942*|*gfx950");
  setenv("KVAULT_CXX", cxx.path().c_str(), 1);
  setenv("KVAULT_NVCC", "/no/such/nvcc", 1);
  setenv("KVAULT_HIPCC", hipcc.path().c_str(), 1);
  auto tools = DiscoverTools();
  ASSERT_EQ(tools.size(), 3u);
  EXPECT_EQ(tools[0].name, "g++");
  EXPECT_TRUE(tools[0].found);
  EXPECT_EQ(tools[0].version, "g++ (Fake) 12.2.0");
  EXPECT_EQ(tools[1].name, "nvcc");
  EXPECT_FALSE(tools[1].found);
  EXPECT_NE(tools[1].note.find("KVAULT_NVCC"), std::string::npos) << tools[1].note;
  EXPECT_EQ(tools[2].name, "hipcc");
  EXPECT_TRUE(tools[2].found);
  EXPECT_EQ(tools[2].version, "HIP version: 5.2.21153-0");
  EXPECT_EQ(tools[2].offload_arches, (std::vector<std::string>{"gfx90a", "gfx940"})) << tools[2].note;
  EXPECT_NE(tools[2].note.find("unknown: gfx942 gfx950"), std::string::npos) << tools[2].note;
}

// Debian's llvm-N folders, by version; a clang that compiles the empty file for a
// target knows it, one that refuses it does not.
TEST_F(ToolsTest, OtherClangsAreFoundByVersionWithTheirTargets) {
  auto dir = TempDir::Create("", "kvault-llvm");
  ASSERT_TRUE(dir);
  FakeCompiler knows(FakeCompiler::kWritesOutput, "Debian clang version 19.1.7");
  FakeCompiler refuses(FakeCompiler::kRejects, "Debian clang version 9.0.1");
  for (const auto& [folder, clang] : {std::pair<std::string, std::string>{"llvm-19", knows.path()},
                                      {"llvm-9", refuses.path()}, {"llvm-x", knows.path()}}) {
    std::filesystem::create_directories(dir->Join(folder + "/bin"));
    std::filesystem::create_symlink(clang, dir->Join(folder + "/bin/clang"));
  }
  auto clangs = DiscoverOtherClangs(dir->path());
  ASSERT_EQ(clangs.size(), 2u);  // llvm-x is no version
  EXPECT_EQ(clangs[0].name, "clang (llvm-9)");
  EXPECT_TRUE(clangs[0].offload_arches.empty());
  EXPECT_EQ(clangs[1].name, "clang (llvm-19)");
  EXPECT_EQ(clangs[1].offload_arches, (std::vector<std::string>{"gfx942", "gfx950"}));
  EXPECT_EQ(clangs[1].version, "Debian clang version 19.1.7");
  EXPECT_TRUE(DiscoverOtherClangs(dir->Join("missing")).empty());
}

}  // namespace
}  // namespace kvault
