#include "util/mapped_file.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
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

// What a candidate's worker can leave where an output should be: a FIFO (opening it
// for reading would wait for a writer forever) and a sparse file of gigabytes (read
// whole, it would cost that much memory). Both are refused at once.
TEST(MappedFileTest, AFifoOrAFileOverTheBoundIsRefusedWithoutWaitingOrReading) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir);
  ASSERT_EQ(::mkfifo(dir->Join("fifo").c_str(), 0600), 0);
  auto fifo = MappedFile::Open(dir->Join("fifo"));
  ASSERT_FALSE(fifo);
  EXPECT_NE(fifo.error().find("not a regular file"), std::string::npos) << fifo.error();
  ASSERT_TRUE(WriteFileAtomic(dir->Join("sparse"), ""));
  ASSERT_EQ(::truncate(dir->Join("sparse").c_str(), off_t{8} << 30), 0);
  auto sparse = MappedFile::Open(dir->Join("sparse"), 1 << 20);
  ASSERT_FALSE(sparse);
  EXPECT_NE(sparse.error().find("more than the 1048576 expected at most"), std::string::npos) << sparse.error();
  ASSERT_TRUE(WriteFileAtomic(dir->Join("small"), "abc"));
  EXPECT_TRUE(MappedFile::Open(dir->Join("small"), 3));
  EXPECT_FALSE(MappedFile::Open(dir->Join("small"), 2));
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
