#include "engine/reference_cache.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>

#include "cache/cache.h"
#include "util/files.h"
#include "util/json.h"
#include "util/sha256.h"

namespace kvault {

Result<FileStamp> StampOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Error{path + ": " + std::strerror(errno)};
  FileStamp s;
  s.device = st.st_dev;
  s.inode = st.st_ino;
  s.size = static_cast<unsigned long long>(st.st_size);
  s.change_s = st.st_ctim.tv_sec;
  s.change_ns = st.st_ctim.tv_nsec;
  return s;
}

ReferenceCache::ReferenceCache(std::string cache_dir) : root_(std::move(cache_dir)) {}

namespace {
constexpr char kOutputName[] = "output.kvt";
constexpr char kTagName[] = "tag";
constexpr char kTagField[] = "output_sha256";

// Outputs this process has checked: key -> the hash the engine recorded and the
// file's stamp when it last had it (no hashing again while the stamp holds).
struct Pin {
  std::string sha256;
  FileStamp stamp;
};
std::mutex pins_mu;
std::map<std::string, Pin>& Pins() {
  static auto* pins = new std::map<std::string, Pin>();
  return *pins;
}

// The entry's record, or nullopt when the entry lacks it (then rebuilt).
std::optional<ReferenceEntry> ReadEntry(const std::optional<CacheEntry>& e) {
  if (!e) return std::nullopt;
  const Json& meta = e->manifest.meta;
  if (!meta.is_object() || !meta.contains("input_digest") || !meta["input_digest"].is_string())
    return std::nullopt;
  ReferenceEntry r;
  r.output_path = e->Path(kOutputName);
  r.input_digest = meta["input_digest"].get<std::string>();
  if (!FileExists(r.output_path)) return std::nullopt;
  r.hit = true;
  return r;
}

// The hash the engine recorded for `key`: this process's, else the tag on disk.
std::optional<std::string> RecordedHash(const std::string& key, const Cache& tags) {
  {
    std::lock_guard<std::mutex> lock(pins_mu);
    auto it = Pins().find(key);
    if (it != Pins().end()) return it->second.sha256;
  }
  auto tag = tags.Lookup(key, CountLookup::kNo);
  if (!tag || !tag->manifest.meta.is_object() || !tag->manifest.meta.contains(kTagField) ||
      !tag->manifest.meta[kTagField].is_string())
    return std::nullopt;
  return tag->manifest.meta[kTagField].get<std::string>();
}

// Whether `entry`'s output has the hash the engine recorded; sets its stamp.
bool Vouch(const std::string& key, ReferenceEntry& entry, const Cache& tags) {
  auto before = StampOf(entry.output_path);
  if (!before) return false;
  {
    std::lock_guard<std::mutex> lock(pins_mu);
    auto it = Pins().find(key);
    if (it != Pins().end() && it->second.stamp == *before) {
      entry.stamp = *before;
      return true;
    }
  }
  auto expected = RecordedHash(key, tags);
  if (!expected) return false;
  auto actual = Sha256FileHex(entry.output_path);
  auto after = StampOf(entry.output_path);
  if (!actual || *actual != *expected || !after || !(*after == *before)) return false;
  std::lock_guard<std::mutex> lock(pins_mu);
  Pins()[key] = Pin{*expected, *after};
  entry.stamp = *after;
  return true;
}

void Forget(const std::string& key) {
  std::lock_guard<std::mutex> lock(pins_mu);
  Pins().erase(key);
}

// Records `sha256` as the output hash of `key` where reference workers cannot write.
Status RecordHash(const std::string& key, const std::string& sha256, const Cache& tags) {
  auto staged = tags.Stage();
  if (!staged) return Error{staged.error()};
  if (auto st = WriteFileAtomic(staged->Join(kTagName), sha256); !st) return st;
  Json meta{{kTagField, sha256}};
  // A tag of this key left by an earlier entry goes: this one names the new output.
  std::error_code ec;
  std::filesystem::remove_all(tags.EntryDir(key), ec);
  auto entry = tags.Commit(key, std::move(*staged), meta);
  if (!entry) return Error{entry.error()};
  return Status::Ok();
}
}  // namespace

bool ReferenceCache::Unchanged(const ReferenceEntry& entry) {
  auto now = StampOf(entry.output_path);
  return now && *now == entry.stamp;
}

Result<ReferenceEntry> ReferenceCache::GetOrCompute(
    const std::string& key, const std::function<Result<std::string>(const std::string&)>& compute) {
  auto limits = CacheLimits::FromEnv();
  if (!limits) return Error{limits.error()};
  Cache cache(root_, "refs", *limits);
  Cache tags(root_, "reftags", *limits);
  if (auto hit = ReadEntry(cache.Lookup(key)); hit && Vouch(key, *hit, tags)) return *hit;
  auto lock = cache.Lock(key, FileLock::kForever);
  if (!lock) return Error{"cannot lock reference entry " + key + ": " + lock.error()};
  if (auto hit = ReadEntry(cache.Lookup(key, CountLookup::kNo))) {  // computed meanwhile
    if (Vouch(key, *hit, tags)) return *hit;
    // Not the output the engine recorded (or none recorded): made again by this run.
    std::error_code ec;
    std::filesystem::remove_all(cache.EntryDir(key), ec);
    if (ec) return Error{"cannot remove the unvouched reference entry " + key + ": " + ec.message()};
  }
  Forget(key);
  auto staged = cache.Stage();
  if (!staged) return Error{"reference cache: " + staged.error()};
  auto digest = compute(staged->Join(kOutputName));
  if (!digest) return Error{digest.error()};
  Json meta{{"input_digest", *digest}};
  if (auto st = WriteFileAtomic(staged->Join("meta.json"), meta.dump()); !st)
    return Error{"cannot write reference entry: " + st.error()};
  auto made = Sha256FileHex(staged->Join(kOutputName));
  if (!made) return Error{"cannot read the reference output: " + made.error()};
  auto entry = cache.Commit(key, std::move(*staged), meta);
  if (!entry) return Error{"cannot store reference entry: " + entry.error()};
  ReferenceEntry e;
  e.output_path = entry->Path(kOutputName);
  e.input_digest = *digest;
  // The hash of the output as committed, from here on the only one this entry may have.
  auto before = StampOf(e.output_path);
  auto sha = Sha256FileHex(e.output_path);
  auto after = StampOf(e.output_path);
  // Another entry in its place (Commit keeps one that was there) is not this run's.
  if (!before || !sha || !after || !(*before == *after) || *sha != *made)
    return Error{"the reference output of " + key + " changed between its run and its record"};
  if (auto st = RecordHash(key, *sha, tags); !st) return Error{"cannot record the reference's hash: " + st.error()};
  {
    std::lock_guard<std::mutex> pins(pins_mu);
    Pins()[key] = Pin{*sha, *after};
  }
  e.stamp = *after;
  return e;
}

}  // namespace kvault
