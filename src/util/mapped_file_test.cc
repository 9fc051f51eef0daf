#include "util/mapped_file.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>

#include "util/files.h"

namespace kvault {
namespace {

TEST(MappedFileTest, MapsContentsAndSurvivesMove) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir);
  ASSERT_TRUE(WriteFileAtomic(dir->Join("f"), "hello mapped"));
  auto m = MappedFile::Open(dir->Join("f"));
  ASSERT_TRUE(m) << m.error();
  ASSERT_EQ(m->size(), 12u);
  const std::byte* p = m->data();
  MappedFile moved = std::move(*m);
  EXPECT_EQ(moved.data(), p);
  EXPECT_EQ(std::memcmp(moved.data(), "hello mapped", 12), 0);
  EXPECT_EQ(m->data(), nullptr);
}

TEST(MappedFileTest, EmptyMissingAndDirectory) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir);
  ASSERT_TRUE(WriteFileAtomic(dir->Join("empty"), ""));
  auto e = MappedFile::Open(dir->Join("empty"));
  ASSERT_TRUE(e) << e.error();
  EXPECT_EQ(e->size(), 0u);
  auto missing = MappedFile::Open(dir->Join("missing"));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("missing"), std::string::npos);
  EXPECT_FALSE(MappedFile::Open(dir->path()));
}

TEST(MappedFileTest, ASymbolicLinkIsRefused) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir);
  ASSERT_TRUE(WriteFileAtomic(dir->Join("secret"), "reference output"));
  ASSERT_EQ(::symlink(dir->Join("secret").c_str(), dir->Join("out").c_str()), 0);
  auto m = MappedFile::Open(dir->Join("out"));
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().find("symbolic link"), std::string::npos) << m.error();
  EXPECT_TRUE(MappedFile::Open(dir->Join("secret")));
}

TEST(MappedFileTest, TruncatingTheFileAfterOpenChangesNothing) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir);
  const std::string content(1 << 20, 'x');
  ASSERT_TRUE(WriteFileAtomic(dir->Join("f"), content));
  auto m = MappedFile::Open(dir->Join("f"));
  ASSERT_TRUE(m) << m.error();
  ASSERT_EQ(::truncate(dir->Join("f").c_str(), 0), 0);  // a mapping of the file would fault below
  ASSERT_EQ(m->size(), content.size());
  EXPECT_EQ(std::memcmp(m->data(), content.data(), content.size()), 0);
}

}  // namespace
}  // namespace kvault
