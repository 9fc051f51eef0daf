#pragma once
// SHA-256 (FIPS 180-4) and a field-by-field cache-key hasher. Values of these classes
// are independent: distinct objects may be used from different threads.
//
//   Sha256Hex("abc") -> "ba7816bf..."
//
//   KeyHasher key;
//   key.Add("source", file_text);
//   key.Add("compiler", "g++ 12.2.0");
//   std::string id = key.Hex();         // cache entry name
//   std::string why = key.Describe();   // what went into it, for debugging misses
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace kvault {

// Incremental SHA-256. Copyable (a copy continues from the same state).
class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;
  Sha256();
  void Update(std::string_view data);
  void Update(const void* data, size_t size);
  // Returns the digest of everything passed to Update. REQUIRES: called at most once.
  Digest Finish();

 private:
  void Block(const uint8_t* p);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_{};
  size_t buf_len_ = 0;
  uint64_t total_bytes_ = 0;
};

// Lower-case hex of a digest (64 characters).
std::string ToHex(const Sha256::Digest& d);
std::string Sha256Hex(std::string_view data);
// Streams a file through SHA-256. Error names the path and the OS error.
Result<std::string> Sha256FileHex(const std::string& path);

// Hashes a sequence of (tag, value) fields. Each field is encoded as
// u64le(len(tag)) tag u64le(len(value)) value, so fields cannot run together:
// Add("a","bc") and Add("ab","c") hash differently. Order matters.
class KeyHasher {
 public:
  void Add(std::string_view tag, std::string_view value);
  void AddInt(std::string_view tag, int64_t value);  // hashed as its decimal text
  // Hex SHA-256 of the fields added so far; may be called repeatedly.
  std::string Hex() const;
  // One line per field, in order: `tag: "value"` (JSON-style escaped) for values up to
  // 120 bytes, `tag: <N bytes, sha256 HEX>` for longer ones.
  std::string Describe() const;

 private:
  Sha256 sha_;
  std::vector<std::string> lines_;
};

}  // namespace kvault
