#include "engine/reference_cache.h"

#include <filesystem>

#include "util/files.h"
#include "util/json.h"

namespace kvault {
namespace fs = std::filesystem;

ReferenceCache::ReferenceCache(std::string cache_dir) : root_(std::move(cache_dir) + "/refs") {}

namespace {
Result<ReferenceEntry> ReadEntry(const std::string& dir) {
  auto meta = ReadFile(dir + "/meta.json");
  if (!meta) return Error{meta.error()};
  Json j = Json::parse(*meta, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("input_digest") || !j["input_digest"].is_string())
    return Error{"corrupt reference entry " + dir};
  ReferenceEntry e;
  e.output_path = dir + "/output.kvt";
  e.input_digest = j["input_digest"].get<std::string>();
  if (!FileExists(e.output_path)) return Error{"reference entry " + dir + " lacks its output"};
  e.hit = true;
  return e;
}
}  // namespace

Result<ReferenceEntry> ReferenceCache::GetOrCompute(
    const std::string& key, const std::function<Result<std::string>(const std::string&)>& compute) {
  const std::string dir = root_ + "/" + key.substr(0, 2) + "/" + key;
  if (auto hit = ReadEntry(dir)) return hit;
  if (auto st = EnsureDir(dir); !st) return Error{"cannot create " + dir + ": " + st.error()};
  auto lock = FileLock::Acquire(dir + "/.lock");
  if (!lock) return Error{"cannot lock " + dir + ": " + lock.error()};
  if (auto hit = ReadEntry(dir)) return hit;  // another process computed it meanwhile
  const std::string out = dir + "/output.kvt";
  auto digest = compute(out);
  if (!digest) return Error{digest.error()};
  Json meta{{"input_digest", *digest}};
  if (auto st = WriteFileAtomic(dir + "/meta.json", meta.dump()); !st)
    return Error{"cannot write reference entry: " + st.error()};
  ReferenceEntry e;
  e.output_path = out;
  e.input_digest = *digest;
  return e;
}

}  // namespace kvault
