#include "util/files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

namespace kvault {
namespace {

Error OsError(std::string_view what, const std::string& path, int err) {
  return Error{std::string(what) + " " + path + ": " + std::strerror(err)};
}

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

Result<UniqueFd> OpenLockFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666));
  if (!fd) return OsError("cannot open lock file", path, errno);
  return fd;
}

}  // namespace

Result<std::string> ReadFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return OsError("cannot open", path, errno);
  std::string out;
  struct stat st;
  if (::fstat(fd.get(), &st) == 0 && st.st_size > 0) out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return OsError("cannot read", path, errno);
    }
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

Result<std::string> ReadRegularFile(const std::string& path, uint64_t max_bytes) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd) return OsError("cannot open", path, errno);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return OsError("cannot stat", path, errno);
  if (!S_ISREG(st.st_mode)) return Error{path + ": not a regular file"};
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes)
    return Error{path + ": " + std::to_string(size) + " bytes, more than the " + std::to_string(max_bytes) +
                 " expected at most"};
  std::string out(static_cast<size_t>(size), '\0');
  size_t got = 0;
  while (got < out.size()) {
    ssize_t n = ::pread(fd.get(), out.data() + got, out.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return OsError("cannot read", path, errno);
    if (n == 0) return Error{path + ": shorter than its size while read"};
    got += static_cast<size_t>(n);
  }
  return out;
}

Status WriteFileAtomic(const std::string& path, std::string_view contents) {
  std::string dir = DirName(path);
  std::random_device rd;
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd());
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
  if (!fd) return OsError("cannot create", tmp, errno);
  auto fail = [&](std::string_view what, int err) {
    ::unlink(tmp.c_str());
    return Status(OsError(what, tmp, err));
  };
  if (!WriteAll(fd.get(), contents)) return fail("cannot write", errno);
  if (::fsync(fd.get()) != 0) return fail("cannot fsync", errno);
  if (::close(fd.release()) != 0) return fail("cannot close", errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return OsError("cannot rename " + tmp + " to", path, err);
  }
  // Make the rename itself durable; failure here does not undo the write.
  UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dfd) ::fsync(dfd.get());
  return Status::Ok();
}

Status EnsureDir(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return Error{"cannot create directory " + path + ": " + ec.message()};
  if (!std::filesystem::is_directory(path, ec)) {
    return Error{"cannot create directory " + path + ": exists and is not a directory"};
  }
  return Status::Ok();
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

Result<TempDir> TempDir::Create(std::string_view parent, std::string_view prefix) {
  std::string dir(parent);
  if (dir.empty()) {
    const char* env = std::getenv("TMPDIR");
    dir = (env && *env) ? env : "/tmp";
  } else if (Status st = EnsureDir(dir); !st) {
    return Error{st.error()};
  }
  std::string templ = dir + "/" + std::string(prefix) + "-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) {
    return OsError("cannot create temporary directory", templ, errno);
  }
  return TempDir(std::move(templ));
}

TempDir::TempDir(TempDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    Remove();
    path_ = std::exchange(other.path_, {});
  }
  return *this;
}

TempDir::~TempDir() { Remove(); }

std::string TempDir::Join(std::string_view name) const { return path_ + "/" + std::string(name); }

void TempDir::Remove() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);  // best effort: a destructor cannot report
  path_.clear();
}

// One baton per lock path, for the life of the process.
std::shared_ptr<FileLock::Baton> FileLock::GateFor(const std::string& path) {
  static std::mutex registry_mutex;
  static std::map<std::string, std::shared_ptr<Baton>> registry;
  std::lock_guard<std::mutex> hold(registry_mutex);
  auto& m = registry[path];
  if (!m) m = std::make_shared<Baton>();
  return m;
}

bool FileLock::Baton::AcquireUntil(std::chrono::steady_clock::time_point deadline, bool forever) {
  std::unique_lock<std::mutex> hold(mutex_);
  if (forever) {
    released_.wait(hold, [&] { return !busy_; });
  } else if (!released_.wait_until(hold, deadline, [&] { return !busy_; })) {
    return false;
  }
  busy_ = true;
  return true;
}

bool FileLock::Baton::TryAcquire() {
  std::lock_guard<std::mutex> hold(mutex_);
  if (busy_) return false;
  busy_ = true;
  return true;
}

void FileLock::Baton::Release() {
  {
    std::lock_guard<std::mutex> hold(mutex_);
    busy_ = false;
  }
  released_.notify_one();
}

Result<FileLock> FileLock::Acquire(const std::string& path, std::chrono::milliseconds timeout) {
  auto fd = OpenLockFile(path);
  if (!fd) return Error{fd.error()};
  auto gate = GateFor(path);
  const bool forever = timeout < std::chrono::milliseconds::zero();
  const auto deadline = std::chrono::steady_clock::now() + (forever ? std::chrono::milliseconds(0) : timeout);
  if (!gate->AcquireUntil(deadline, forever)) {
    return Error{"timed out after " + std::to_string(timeout.count()) + " ms waiting for lock " + path};
  }
  Gate held(gate);
  if (forever) {
    while (::flock(fd->get(), LOCK_EX) != 0) {
      if (errno != EINTR) return OsError("cannot lock", path, errno);
    }
    return FileLock(path, std::move(held), std::move(*fd));
  }
  auto pause = std::chrono::milliseconds(1);
  while (::flock(fd->get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return OsError("cannot lock", path, errno);
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      return Error{"timed out after " + std::to_string(timeout.count()) +
                   " ms waiting for lock " + path};
    }
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
  return FileLock(path, std::move(held), std::move(*fd));
}

Result<std::optional<FileLock>> FileLock::TryAcquire(const std::string& path) {
  auto fd = OpenLockFile(path);
  if (!fd) return Error{fd.error()};
  auto gate = GateFor(path);
  if (!gate->TryAcquire()) return std::optional<FileLock>();
  Gate held(gate);
  while (::flock(fd->get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) return std::optional<FileLock>();
    if (errno != EINTR) return OsError("cannot lock", path, errno);
  }
  return std::optional<FileLock>(FileLock(path, std::move(held), std::move(*fd)));
}

std::string FileLock::Note() const {
  char buf[256];
  ssize_t n;
  do {
    n = ::pread(fd_.get(), buf, sizeof buf, 0);
  } while (n < 0 && errno == EINTR);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

Status FileLock::SetNote(std::string_view note) {
  if (note.size() > 256) return Error{"lock note longer than 256 bytes"};
  if (::ftruncate(fd_.get(), 0) != 0) return OsError("cannot truncate", path_, errno);
  size_t done = 0;
  while (done < note.size()) {
    ssize_t n = ::pwrite(fd_.get(), note.data() + done, note.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return OsError("cannot write", path_, errno);
    done += static_cast<size_t>(n);
  }
  return {};
}

}  // namespace kvault
