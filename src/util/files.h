#pragma once
// Files and directories: whole-file reads, atomic replacement, temporary directories,
// and a cross-process lock. Every failure is an Error naming the path and the OS error.
// All functions are thread-safe; each object is used by one thread at a time.
//
//   auto lock = FileLock::Acquire(entry_dir + ".lock");   // one process computes
//   if (!FileExists(entry)) WriteFileAtomic(entry, Compute());
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "util/result.h"
#include "util/unique_fd.h"

namespace kvault {

Result<std::string> ReadFile(const std::string& path);

// The whole of `path` when it is a regular file (not a symlink, FIFO or device) of at
// most `max_bytes`: for files an untrusted process wrote, which may be anything.
Result<std::string> ReadRegularFile(const std::string& path, uint64_t max_bytes);

// Replaces `path` with `contents` so that readers see either the old file or the whole
// new one: writes a temporary file in the same directory, fsyncs it, renames it over
// `path`, then fsyncs the directory. The directory must exist. New files get mode
// 0666 & ~umask.
Status WriteFileAtomic(const std::string& path, std::string_view contents);

// Creates `path` and missing parents (like mkdir -p). OK if it already is a directory.
Status EnsureDir(const std::string& path);

// True when something (file, directory, ...) exists at `path` (symlinks followed).
bool FileExists(const std::string& path);

// A fresh private directory (mode 0700) named <parent>/<prefix>-XXXXXX, removed with
// everything in it when the TempDir is destroyed. Movable, not copyable.
class TempDir {
 public:
  // `parent`: default (empty) $TMPDIR, else /tmp; created (with missing ancestors)
  // if it does not exist.
  static Result<TempDir> Create(std::string_view parent = "", std::string_view prefix = "kvault");
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&& other) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  const std::string& path() const { return path_; }
  // path() + "/" + name.
  std::string Join(std::string_view name) const;

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  void Remove();
  std::string path_;
};

// An exclusive advisory lock (flock) on a lock file, held until destruction. Excludes
// other processes and other FileLock objects in this process alike. The lock file is
// created if missing and never deleted (deleting it would let two holders coexist).
// A holder that dies releases the lock. Movable, not copyable.
class FileLock {
 public:
  static constexpr std::chrono::milliseconds kForever{-1};
  // Blocks until the lock is held, or fails once `timeout` has passed (kForever: never).
  // Threads of this process queue on an in-process baton first, so that the lock
  // passes between them at once; the flock is then polled only against other processes.
  static Result<FileLock> Acquire(const std::string& path,
                                  std::chrono::milliseconds timeout = kForever);
  // Takes the lock if it is free now; nullopt when someone else holds it.
  static Result<std::optional<FileLock>> TryAcquire(const std::string& path);

  FileLock(FileLock&&) noexcept = default;
  FileLock& operator=(FileLock&&) noexcept = default;
  ~FileLock() = default;  // closing the descriptor releases the lock, then the gate

  const std::string& path() const { return path_; }

  // A short note kept in the lock file for the next holder (for example when the
  // resource was last used); "" when none was written. Only a holder reads or writes it.
  std::string Note() const;
  Status SetNote(std::string_view note);

 private:
  // The in-process gate of one lock path (any thread may release it).
  class Baton {
   public:
    bool AcquireUntil(std::chrono::steady_clock::time_point deadline, bool forever);
    bool TryAcquire();
    void Release();

   private:
    std::mutex mutex_;
    std::condition_variable released_;
    bool busy_ = false;
  };
  // Holds a Baton, released when the FileLock is destroyed.
  class Gate {
   public:
    Gate() = default;
    explicit Gate(std::shared_ptr<Baton> m) : m_(std::move(m)) {}
    Gate(Gate&& o) noexcept : m_(std::move(o.m_)) {}
    Gate& operator=(Gate&& o) noexcept {
      if (this != &o) {
        Release();
        m_ = std::move(o.m_);
      }
      return *this;
    }
    ~Gate() { Release(); }

   private:
    void Release() {
      if (m_) m_->Release();
      m_.reset();
    }
    std::shared_ptr<Baton> m_;
  };

  static std::shared_ptr<Baton> GateFor(const std::string& path);
  FileLock(std::string path, Gate gate, UniqueFd fd)
      : path_(std::move(path)), gate_(std::move(gate)), fd_(std::move(fd)) {}
  std::string path_;
  Gate gate_;   // destroyed after fd_: the flock is released first
  UniqueFd fd_;
};

}  // namespace kvault
