#include "cache/manifest.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "util/files.h"
#include "util/sha256.h"

namespace kvault {
namespace fs = std::filesystem;

namespace {

constexpr char kFormat[] = "kvault-cache-entry";
constexpr int kVersion = 1;

struct FileStat {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
};

Result<FileStat> Stat(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return Error{"missing " + path};
  if (!S_ISREG(st.st_mode)) return Error{path + " is not a regular file"};
  return FileStat{static_cast<uint64_t>(st.st_size),
                  static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

bool IsManifestOrStamp(const std::string& rel) { return rel == kManifestName || rel == kStampName; }

}  // namespace

Result<Manifest> WriteManifest(const std::string& dir, const std::string& kind, const std::string& key,
                               const Json& meta) {
  std::error_code ec;
  std::vector<std::string> names;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    std::string rel = fs::relative(it->path(), dir, ec).string();
    if (!IsManifestOrStamp(rel)) names.push_back(rel);
  }
  if (ec) return Error{"cannot list " + dir + ": " + ec.message()};
  std::sort(names.begin(), names.end());
  Manifest m;
  m.kind = kind;
  m.key = key;
  m.created = std::chrono::duration_cast<std::chrono::seconds>(
                  std::chrono::system_clock::now().time_since_epoch()).count();
  m.meta = meta.is_null() ? Json::object() : meta;
  Json files = Json::array();
  for (const std::string& name : names) {
    const std::string path = dir + "/" + name;
    auto st = Stat(path);
    if (!st) return Error{st.error()};
    auto sha = Sha256FileHex(path);
    if (!sha) return Error{sha.error()};
    m.files.push_back(ManifestFile{name, st->size, *sha, st->mtime_ns});
    m.bytes += st->size;
    files.push_back(Json{{"name", name}, {"size", st->size}, {"sha256", *sha}, {"mtime_ns", st->mtime_ns}});
  }
  Json j{{"format", kFormat}, {"version", kVersion}, {"kind", kind}, {"key", key},
         {"created", m.created}, {"bytes", m.bytes}, {"files", files}, {"meta", m.meta}};
  if (Status s = WriteFileAtomic(dir + "/" + kManifestName, j.dump(2) + "\n"); !s) return Error{s.error()};
  return m;
}

Result<Manifest> ReadManifest(const std::string& dir) {
  const std::string path = dir + "/" + kManifestName;
  auto text = ReadFile(path);
  if (!text) return Error{text.error()};
  Json j = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Error{path + " is not a JSON object"};
  if (j.value("format", std::string()) != kFormat || !j["version"].is_number_integer() ||
      j["version"].get<int>() != kVersion)
    return Error{path + " is not a version " + std::to_string(kVersion) + " cache entry manifest"};
  try {
    Manifest m;
    m.kind = j.at("kind").get<std::string>();
    m.key = j.at("key").get<std::string>();
    m.created = j.at("created").get<int64_t>();
    m.bytes = j.at("bytes").get<uint64_t>();
    m.meta = j.at("meta");
    for (const Json& f : j.at("files")) {
      m.files.push_back(ManifestFile{f.at("name").get<std::string>(), f.at("size").get<uint64_t>(),
                                     f.at("sha256").get<std::string>(), f.at("mtime_ns").get<int64_t>()});
    }
    return m;
  } catch (const Json::exception& e) {
    return Error{path + ": " + e.what()};
  }
}

Status VerifyEntry(const std::string& dir, const std::string& key, const Manifest& m) {
  if (m.key != key) return Error{"the manifest names key " + m.key};
  for (const ManifestFile& f : m.files) {
    if (f.name.empty() || f.name.find("..") != std::string::npos || f.name[0] == '/')
      return Error{"the manifest lists a file outside the entry: " + f.name};
    const std::string path = dir + "/" + f.name;
    auto st = Stat(path);
    if (!st) return Error{st.error()};
    if (st->size != f.size)
      return Error{f.name + " has " + std::to_string(st->size) + " bytes, the manifest says " +
                   std::to_string(f.size)};
    if (f.size <= kFullHashLimit) {
      auto sha = Sha256FileHex(path);
      if (!sha) return Error{sha.error()};
      if (*sha != f.sha256) return Error{f.name + " does not match its SHA-256"};
    } else if (st->mtime_ns != f.mtime_ns) {
      return Error{f.name + " was modified after it was stored"};
    }
  }
  return Status::Ok();
}

}  // namespace kvault
