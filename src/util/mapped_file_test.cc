#include "util/mapped_file.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace kvault
