#include "util/sha256.h"

#include <gtest/gtest.h>

#include "util/files.h"

namespace kvault {
namespace {

TEST(Sha256Test, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256Test, PaddingBoundaries) {
  // Lengths around the 56- and 64-byte padding edges, fed in odd-sized pieces.
  for (size_t len : {55u, 56u, 57u, 63u, 64u, 65u, 119u, 120u, 128u}) {
    std::string msg(len, 'q');
    Sha256 s;
    for (size_t pos = 0; pos < len; pos += 7) s.Update(std::string_view(msg).substr(pos, 7));
    EXPECT_EQ(ToHex(s.Finish()), Sha256Hex(msg)) << len;
  }
  EXPECT_EQ(Sha256Hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST(Sha256Test, File) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir) << dir.error();
  std::string path = dir->Join("f");
  ASSERT_TRUE(WriteFileAtomic(path, "abc"));
  auto hex = Sha256FileHex(path);
  ASSERT_TRUE(hex) << hex.error();
  EXPECT_EQ(*hex, Sha256Hex("abc"));
  auto missing = Sha256FileHex(dir->Join("nope"));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("nope"), std::string::npos);
}

TEST(KeyHasherTest, FieldsCannotRunTogether) {
  KeyHasher a, b;
  a.Add("a", "bc");
  b.Add("ab", "c");
  EXPECT_NE(a.Hex(), b.Hex());
  KeyHasher c, d;
  c.Add("x", "12");
  c.Add("y", "");
  d.Add("x", "1");
  d.Add("y", "2");
  EXPECT_NE(c.Hex(), d.Hex());
}

TEST(KeyHasherTest, DeterministicAndRepeatable) {
  KeyHasher a, b;
  a.Add("source", "int main(){}");
  a.AddInt("opt", 3);
  b.Add("source", "int main(){}");
  b.Add("opt", "3");
  EXPECT_EQ(a.Hex(), b.Hex());
  EXPECT_EQ(a.Hex(), a.Hex());
  EXPECT_EQ(a.Hex().size(), 64u);
  KeyHasher empty;
  EXPECT_NE(empty.Hex(), a.Hex());
}

TEST(KeyHasherTest, Describe) {
  KeyHasher k;
  k.Add("compiler", "g++ \"12\"\n");
  std::string big(200, 'z');
  k.Add("source", big);
  EXPECT_EQ(k.Describe(), "compiler: \"g++ \\\"12\\\"\\u000a\"\n"
                          "source: <200 bytes, sha256 " + Sha256Hex(big) + ">\n");
}

}  // namespace
}  // namespace kvault
