#include "util/files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <thread>
#include <vector>

namespace kvault {
namespace {

namespace fs = std::filesystem;

TEST(FilesTest, ReadMissingNamesPath) {
  auto r = ReadFile("/nonexistent/kvault/file.txt");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("/nonexistent/kvault/file.txt"), std::string::npos);
}

TEST(FilesTest, WriteAtomicRoundTripAndReplace) {
  auto dir = TempDir::Create("", "kvault-files");
  ASSERT_TRUE(dir) << dir.error();
  std::string path = dir->Join("data.bin");
  std::string binary("a\0b\xff", 4);
  ASSERT_TRUE(WriteFileAtomic(path, binary));
  EXPECT_EQ(*ReadFile(path), binary);
  ASSERT_TRUE(WriteFileAtomic(path, "second"));
  EXPECT_EQ(*ReadFile(path), "second");
  // No temporary files left behind.
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir->path())) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

TEST(FilesTest, WriteAtomicIntoMissingDirFails) {
  Status s = WriteFileAtomic("/nonexistent/kvault/x", "y");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find("/nonexistent/kvault/x"), std::string::npos);
}

// Files an untrusted process wrote: only regular files, only up to the size expected.
TEST(FilesTest, ReadRegularFileRefusesWhatIsNotAPlainFileOfTheExpectedSize) {
  auto dir = TempDir::Create("", "kvault-files");
  ASSERT_TRUE(dir) << dir.error();
  const std::string path = dir->Join("out.kvt");
  ASSERT_TRUE(WriteFileAtomic(path, "0123456789"));
  auto whole = ReadRegularFile(path, 10);
  ASSERT_TRUE(whole) << whole.error();
  EXPECT_EQ(*whole, "0123456789");
  auto too_large = ReadRegularFile(path, 9);
  ASSERT_FALSE(too_large);
  EXPECT_NE(too_large.error().find("more than the 9"), std::string::npos) << too_large.error();
  const std::string link = dir->Join("link.kvt");
  fs::create_symlink(path, link);
  EXPECT_FALSE(ReadRegularFile(link, 100));  // a link could point anywhere
  const std::string fifo = dir->Join("fifo.kvt");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto from_fifo = ReadRegularFile(fifo, 100);  // would block a plain read for ever
  ASSERT_FALSE(from_fifo);
  EXPECT_NE(from_fifo.error().find("not a regular file"), std::string::npos) << from_fifo.error();
  EXPECT_FALSE(ReadRegularFile(dir->Join("missing.kvt"), 100));
}

TEST(FilesTest, LargeFile) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir);
  std::string big(3 << 20, 'k');
  big[12345] = 'z';
  ASSERT_TRUE(WriteFileAtomic(dir->Join("big"), big));
  EXPECT_EQ(*ReadFile(dir->Join("big")), big);
}

TEST(FilesTest, TempDirRemovedWithContents) {
  std::string path;
  {
    auto dir = TempDir::Create("", "kvault-td");
    ASSERT_TRUE(dir) << dir.error();
    path = dir->path();
    EXPECT_NE(path.find("kvault-td-"), std::string::npos);
    ASSERT_TRUE(EnsureDir(dir->Join("a/b/c")));
    ASSERT_TRUE(WriteFileAtomic(dir->Join("a/b/c/f"), "x"));
    EXPECT_TRUE(FileExists(dir->Join("a/b/c/f")));
    TempDir moved = std::move(*dir);
    EXPECT_EQ(moved.path(), path);
    EXPECT_TRUE(FileExists(path));
  }
  EXPECT_FALSE(FileExists(path));
}

TEST(FilesTest, TempDirUnderGivenParent) {
  auto outer = TempDir::Create();
  ASSERT_TRUE(outer);
  std::string parent = outer->Join("cache/tmp");  // does not exist yet
  auto inner = TempDir::Create(parent, "scratch");
  ASSERT_TRUE(inner) << inner.error();
  EXPECT_TRUE(inner->path().starts_with(parent + "/scratch-")) << inner->path();
  EXPECT_TRUE(FileExists(inner->path()));
}

TEST(FilesTest, EnsureDirOverFileFails) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir);
  ASSERT_TRUE(WriteFileAtomic(dir->Join("f"), "x"));
  EXPECT_FALSE(EnsureDir(dir->Join("f")));
  EXPECT_TRUE(EnsureDir(dir->path()));
}

TEST(FileLockTest, ExcludesWithinProcess) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir);
  std::string lock_path = dir->Join("entry.lock");
  auto held = FileLock::Acquire(lock_path);
  ASSERT_TRUE(held) << held.error();
  auto again = FileLock::TryAcquire(lock_path);
  ASSERT_TRUE(again) << again.error();
  EXPECT_FALSE(again->has_value());
  auto timed = FileLock::Acquire(lock_path, std::chrono::milliseconds(50));
  ASSERT_FALSE(timed);
  EXPECT_NE(timed.error().find("timed out"), std::string::npos);
  { FileLock released = std::move(*held); }
  auto now_free = FileLock::TryAcquire(lock_path);
  ASSERT_TRUE(now_free);
  EXPECT_TRUE(now_free->has_value());
}

TEST(FileLockTest, PassesBetweenThreadsOneAtATime) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir);
  const std::string lock_path = dir->Join("entry.lock");
  std::atomic<int> inside{0}, most{0}, taken{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        auto lock = FileLock::Acquire(lock_path, std::chrono::seconds(20));
        if (!lock) continue;
        const int now = ++inside;
        most = std::max(most.load(), now);
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        --inside;
        ++taken;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(taken.load(), 200);
  EXPECT_EQ(most.load(), 1);
}

TEST(FileLockTest, ReleasedByAnotherThread) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir);
  const std::string lock_path = dir->Join("entry.lock");
  auto held = FileLock::Acquire(lock_path);
  ASSERT_TRUE(held) << held.error();
  std::thread releaser([lock = std::move(*held)]() mutable {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    FileLock gone = std::move(lock);
  });
  auto got = FileLock::Acquire(lock_path, std::chrono::seconds(10));
  releaser.join();
  ASSERT_TRUE(got) << got.error();
}

TEST(FileLockTest, NotePassesToTheNextHolder) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir);
  const std::string lock_path = dir->Join("entry.lock");
  {
    auto first = FileLock::Acquire(lock_path);
    ASSERT_TRUE(first) << first.error();
    EXPECT_EQ(first->Note(), "");
    ASSERT_TRUE(first->SetNote("a longer note first"));
    ASSERT_TRUE(first->SetNote("12345"));
  }
  auto second = FileLock::Acquire(lock_path);
  ASSERT_TRUE(second) << second.error();
  EXPECT_EQ(second->Note(), "12345");
  EXPECT_FALSE(second->SetNote(std::string(300, 'x')));
}

TEST(FileLockTest, ExcludesAcrossProcesses) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir);
  std::string lock_path = dir->Join("entry.lock");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // child: hold the lock for 300 ms, then exit (which releases it)
    auto lock = FileLock::Acquire(lock_path);
    char c = lock ? 'y' : 'n';
    (void)!::write(ready[1], &c, 1);
    ::usleep(300 * 1000);
    ::_exit(0);
  }
  ::close(ready[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  ASSERT_EQ(c, 'y');
  auto busy = FileLock::TryAcquire(lock_path);
  ASSERT_TRUE(busy);
  EXPECT_FALSE(busy->has_value());
  auto start = std::chrono::steady_clock::now();
  auto got = FileLock::Acquire(lock_path, std::chrono::seconds(10));
  ASSERT_TRUE(got) << got.error();
  EXPECT_GT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
  int status = 0;
  ::waitpid(pid, &status, 0);
}

}  // namespace
}  // namespace kvault
