#pragma once
// MappedFile: a whole file read into read-only memory of its own, unmapped on
// destruction. Movable, not copyable; data() stays valid across moves. Immutable after
// Open, so const access is thread-safe.
//
// A copy, not a mapping of the file: a file truncated or rewritten by someone else
// afterwards (a candidate's worker, in its own folder) changes nothing here and cannot
// fault a read (SIGBUS). A symbolic link is refused (O_NOFOLLOW on the last component).
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "util/result.h"

namespace kvault {

class MappedFile {
 public:
  // Maps `path`. An empty file yields size() == 0 and data() == nullptr. Only a
  // regular file of at most `max_bytes` is read: it is opened without blocking (a FIFO
  // a candidate left in its place would otherwise hold this thread until a writer
  // came) and its size checked before any byte is read (a sparse file of gigabytes).
  static Result<MappedFile> Open(const std::string& path,
                                 uint64_t max_bytes = std::numeric_limits<uint64_t>::max());

  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  MappedFile(const std::byte* data, size_t size) : data_(data), size_(size) {}
  void Unmap();
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace kvault
