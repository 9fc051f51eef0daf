#include "engine/reference_cache.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "cache/cache.h"
#include "cache/manifest.h"
#include "engine/testing/test_cache.h"
#include "util/files.h"

namespace kvault {
namespace {

// A compute step that writes `bytes` as the output and counts its calls.
struct Reference {
  std::string bytes = "reference output";
  int calls = 0;
  Result<std::string> operator()(const std::string& out) {
    ++calls;
    if (auto st = WriteFileAtomic(out, bytes); !st) return Error{st.error()};
    return std::string("digest-1");
  }
};

ReferenceEntry Get(ReferenceCache& cache, const std::string& key, Reference& ref) {
  auto got = cache.GetOrCompute(key, [&](const std::string& out) { return ref(out); });
  if (!got) throw std::runtime_error(got.error());
  return *got;
}

// What a reference worker that can write the cache does to another task's entry:
// new bytes in place, and a manifest that agrees with them.
void Forge(const ReferenceEntry& e, const std::string& key, const std::string& bytes) {
  std::ofstream(e.output_path, std::ios::trunc) << bytes;
  const std::string dir = std::filesystem::path(e.output_path).parent_path();
  auto manifest = ReadManifest(dir);
  ASSERT_TRUE(manifest) << manifest.error();
  ASSERT_TRUE(WriteManifest(dir, "refs", key, manifest->meta));
}

std::string Key(char c) { return std::string(64, c); }

TEST(ReferenceCache, ComputesOnceThenAnswersFromTheCache) {
  testing::TestCache dir;
  ReferenceCache cache(dir.path());
  Reference ref;
  ReferenceEntry first = Get(cache, Key('a'), ref);
  EXPECT_FALSE(first.hit);
  ReferenceEntry second = Get(cache, Key('a'), ref);
  EXPECT_TRUE(second.hit);
  EXPECT_EQ(ref.calls, 1);
  EXPECT_EQ(ReadFile(second.output_path).value(), "reference output");
  EXPECT_TRUE(ReferenceCache::Unchanged(second));
}

TEST(ReferenceCache, AnOutputRewrittenWithItsChecksumIsMadeAgain) {
  testing::TestCache dir;
  ReferenceCache cache(dir.path());
  Reference ref;
  ReferenceEntry made = Get(cache, Key('b'), ref);
  Forge(made, Key('b'), "forged output!!!");
  EXPECT_FALSE(ReferenceCache::Unchanged(made));  // a verdict in flight is withdrawn
  ReferenceEntry again = Get(cache, Key('b'), ref);
  EXPECT_EQ(ref.calls, 2);
  EXPECT_EQ(ReadFile(again.output_path).value(), "reference output");
}

TEST(ReferenceCache, ATagOnDiskIsCheckedByAnotherProcess) {
  testing::TestCache dir;
  Reference ref;
  {
    ReferenceCache cache(dir.path());
    Get(cache, Key('c'), ref);
  }
  // This process's memory knows the hash; the tag alone must also catch a forgery,
  // as a later process sees it: forged, and the tag of another key's output put in
  // place is refused too.
  ReferenceCache cache(dir.path());
  ReferenceEntry hit = Get(cache, Key('c'), ref);
  EXPECT_EQ(ref.calls, 1);
  Forge(hit, Key('c'), "forged, same size");
  ReferenceEntry again = Get(cache, Key('c'), ref);
  EXPECT_EQ(ref.calls, 2);
  EXPECT_EQ(ReadFile(again.output_path).value(), "reference output");
}

TEST(ReferenceCache, AnEntryWithoutTheEngineTagIsMadeAgain) {
  testing::TestCache dir;
  ReferenceCache cache(dir.path());
  Reference planted;
  planted.bytes = "planted by a worker";
  // An entry committed in the refs kind with no tag (as a worker could plant one, or
  // as a cache from before tags holds them) under a key not yet seen by this process.
  {
    Cache refs(dir.path(), "refs");
    auto staged = refs.Stage();
    ASSERT_TRUE(staged);
    ASSERT_TRUE(WriteFileAtomic(staged->Join("output.kvt"), planted.bytes));
    ASSERT_TRUE(refs.Commit(Key('d'), std::move(*staged), Json{{"input_digest", "digest-1"}}));
  }
  Reference ref;
  ReferenceEntry got = Get(cache, Key('d'), ref);
  EXPECT_EQ(ref.calls, 1);
  EXPECT_EQ(ReadFile(got.output_path).value(), "reference output");
}

}  // namespace
}  // namespace kvault
