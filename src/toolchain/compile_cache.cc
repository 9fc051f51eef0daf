#include "toolchain/compile_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <vector>

namespace kvault {

namespace fs = std::filesystem;

namespace {

// torch/version.h from the first include path holding it, "" if none.
std::string TorchVersionHeader(const TorchBuildInfo& torch) {
  for (const std::string& dir : torch.include_paths) {
    for (const char* rel : {"/torch/version.h", "/torch/csrc/api/include/torch/version.h"}) {
      if (auto text = ReadFile(dir + rel)) return *text;
    }
  }
  return "";
}

// fsync(2) of the file or directory at `path`.
Status SyncPath(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{"cannot open " + path + ": " + std::strerror(errno)};
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return Error{"cannot fsync " + path + ": " + std::strerror(err)};
  return Status();
}

}  // namespace

void AddToolchainKeyFields(KeyHasher& h, const std::string& compiler_identity, const TorchBuildInfo& torch) {
  h.Add("compiler", compiler_identity);
  h.Add("torch_version", torch.torch_version);
  h.Add("torch_version_header", TorchVersionHeader(torch));
}

std::string ModuleNameForKey(const std::string& key) { return "kv_" + key.substr(0, 16); }

Result<std::string> DirectoryDigest(const std::string& dir) {
  static std::mutex mu;
  static std::map<std::string, std::string> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(dir); it != cache.end()) return it->second;
  }
  std::error_code ec;
  std::vector<std::string> files;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it); it.increment(ec)) {
    if (it->is_regular_file(ec)) files.push_back(fs::relative(it->path(), dir, ec).string());
  }
  if (ec) return Error{"cannot list " + dir + ": " + ec.message()};
  if (files.empty()) return Error{"no files under " + dir};
  std::sort(files.begin(), files.end());
  KeyHasher h;
  for (const std::string& rel : files) {
    auto text = ReadFile(dir + "/" + rel);
    if (!text) return Error{text.error()};
    h.Add(rel, *text);
  }
  std::string digest = h.Hex();
  std::lock_guard<std::mutex> lock(mu);
  cache[dir] = digest;
  return digest;
}

std::string CompileCache::EntryDir(const std::string& key) const {
  return root_ + "/" + key.substr(0, 2) + "/" + key;
}

std::optional<CompileCache::Entry> CompileCache::Lookup(const std::string& key,
                                                        const std::string& artifact_name) const {
  Entry e;
  e.artifact = EntryDir(key) + "/" + artifact_name;
  if (!FileExists(e.artifact)) return std::nullopt;
  if (auto text = ReadFile(EntryDir(key) + "/build.json")) {
    e.meta = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (e.meta.is_discarded()) e.meta = Json::object();
  }
  return e;
}

Result<FileLock> CompileCache::Lock(const std::string& key, std::chrono::milliseconds timeout) const {
  std::string shard = root_ + "/" + key.substr(0, 2);
  if (Status s = EnsureDir(shard); !s) return Error{s.error()};
  return FileLock::Acquire(shard + "/" + key + ".lock", timeout);
}

Result<std::string> CompileCache::Store(const std::string& key, const std::string& artifact_name,
                                        const std::string& built_file, const Json& meta) const {
  std::string dir = EntryDir(key);
  if (Status s = EnsureDir(dir); !s) return Error{s.error()};
  auto bytes = ReadFile(built_file);
  if (!bytes) return Error{bytes.error()};
  if (Status s = WriteFileAtomic(dir + "/build.json", meta.dump(2) + "\n"); !s) return Error{s.error()};
  std::string artifact = dir + "/" + artifact_name;
  if (Status s = WriteFileAtomic(artifact, *bytes); !s) return Error{s.error()};
  return artifact;
}

Result<std::string> CompileCache::StoreByMove(const std::string& key, const std::string& artifact_name,
                                              const std::string& built_file, const Json& meta) const {
  std::string dir = EntryDir(key);
  if (Status s = EnsureDir(dir); !s) return Error{s.error()};
  if (Status s = WriteFileAtomic(dir + "/build.json", meta.dump(2) + "\n"); !s) return Error{s.error()};
  if (Status s = SyncPath(built_file); !s) return Error{s.error()};
  std::string artifact = dir + "/" + artifact_name;
  if (::rename(built_file.c_str(), artifact.c_str()) != 0)
    return Error{"cannot move " + built_file + " to " + artifact + ": " + std::strerror(errno)};
  if (Status s = SyncPath(dir); !s) return Error{s.error()};
  return artifact;
}

}  // namespace kvault
