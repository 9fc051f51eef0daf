#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "util/mapped_file.h"
#include "util/unique_fd.h"

namespace kvault {

Result<MappedFile> MappedFile::Open(const std::string& path, uint64_t max_bytes) {
  // Not through a symbolic link: a candidate's worker could point its output file at
  // a file it cannot read itself (a reference output), which this process can.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd) {
    if (errno == ELOOP) return Error{"cannot open " + path + ": a symbolic link (refused)"};
    return Error{"cannot open " + path + ": " + std::strerror(errno)};
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Error{"cannot stat " + path + ": " + std::strerror(errno)};
  if (!S_ISREG(st.st_mode)) return Error{"cannot map " + path + ": not a regular file"};
  if (static_cast<uint64_t>(st.st_size) > max_bytes)
    return Error{"cannot map " + path + ": " + std::to_string(st.st_size) + " bytes, more than the " +
                 std::to_string(max_bytes) + " expected at most"};
  size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) return MappedFile();
  // Read into memory of this process's own, not a mapping of the file: a file mapped
  // from a folder a candidate's worker can write could be truncated by it while mapped,
  // and reading past the new end would kill this process (SIGBUS).
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return Error{"cannot map " + path + ": " + std::strerror(errno)};
  MappedFile file(static_cast<const std::byte*>(p), size);
  auto* out = static_cast<char*>(p);
  for (size_t done = 0; done < size;) {
    ssize_t n = ::read(fd.get(), out + done, std::min<size_t>(size - done, size_t{1} << 30));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error{"cannot read " + path + ": " + std::strerror(errno)};
    if (n == 0) return Error{"cannot read " + path + ": it shrank while being read"};
    done += static_cast<size_t>(n);
  }
  ::mprotect(p, size, PROT_READ);
  return file;
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
