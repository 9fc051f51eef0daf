#pragma once
// MappedFile: a whole file mapped read-only into memory, unmapped on destruction.
// Movable, not copyable; data() stays valid across moves. Immutable after Open, so
// const access is thread-safe.
//
// The mapping reflects the file: a file truncated by someone else while mapped makes
// reads past its new end fault (SIGBUS). Map only files that are written once and
// replaced atomically (WriteFileAtomic, rename), as the engine's files are.
#include <cstddef>
#include <string>

#include "util/result.h"

namespace kvault {

class MappedFile {
 public:
  // Maps `path`. An empty file yields size() == 0 and data() == nullptr.
  static Result<MappedFile> Open(const std::string& path);

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
