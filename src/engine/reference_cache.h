#pragma once
// Reference outputs computed once per (task, case, seed, device, software) and
// reused across candidates, runs and processes: the cache kind "refs" (cache/cache.h,
// docs/cache.md), bounded and verified like every kind. Layout under the cache folder:
//   refs/<key[0:2]>/<key>/output.kvt   the reference's output (docs/tensor-file.md)
//   refs/<key[0:2]>/<key>/meta.json    {"input_digest": ...} (also the manifest's meta)
//   reftags/<key[0:2]>/<key>/          the engine's tag: meta {"output_sha256": ...}
// A reference worker may write refs/ (it writes its output there), so an entry's own
// manifest proves nothing against one: the engine hashes the output right after the
// trusted run and keeps the hash where workers cannot write (the kind "reftags",
// outside their writable folders, and this process's memory). An entry is used only
// while its output has that hash; one that does not (rewritten, or made before tags
// existed) is made again. Each entry returned carries its output's file identity, so
// that a caller can tell that the file was not written while it was used (Unchanged).
// Safe across threads and processes: computing an entry holds the entry's lock.
#include <functional>
#include <string>

#include "util/result.h"

namespace kvault {

// A file's identity and its last change, as stat says: any write, rename or chmod
// moves the change time, which no unprivileged process can set back.
struct FileStamp {
  unsigned long long device = 0, inode = 0, size = 0;
  long long change_s = 0, change_ns = 0;
  bool operator==(const FileStamp&) const = default;
};
Result<FileStamp> StampOf(const std::string& path);

struct ReferenceEntry {
  std::string output_path;
  std::string input_digest;
  bool hit = false;
  FileStamp stamp;  // of output_path when its hash was checked
};

class ReferenceCache {
 public:
  explicit ReferenceCache(std::string cache_dir);

  // Computes the entry's output by calling `compute(out_path)`, which writes the
  // output file and returns the input digest, unless a valid entry exists whose
  // output still has the hash the engine recorded.
  Result<ReferenceEntry> GetOrCompute(
      const std::string& key, const std::function<Result<std::string>(const std::string&)>& compute);

  // Whether `entry`'s output is still the file checked when it was returned.
  static bool Unchanged(const ReferenceEntry& entry);

 private:
  std::string root_;
};

}  // namespace kvault
