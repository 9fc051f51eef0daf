#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "util/mapped_file.h"
#include "util/unique_fd.h"

namespace kvault {

Result<MappedFile> MappedFile::Open(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Error{"cannot open " + path + ": " + std::strerror(errno)};
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Error{"cannot stat " + path + ": " + std::strerror(errno)};
  if (!S_ISREG(st.st_mode)) return Error{"cannot map " + path + ": not a regular file"};
  size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) return MappedFile();
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (p == MAP_FAILED) return Error{"cannot map " + path + ": " + std::strerror(errno)};
  ::madvise(p, size, MADV_SEQUENTIAL);  // a hint; readers scan front to back
  return MappedFile(static_cast<const std::byte*>(p), size);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    Unmap();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() { Unmap(); }

void MappedFile::Unmap() {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace kvault
