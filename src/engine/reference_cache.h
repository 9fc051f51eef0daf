#pragma once
// Reference outputs computed once per (task, case, seed, device, software) and
// reused across candidates, runs and processes: the cache kind "refs" (cache/cache.h,
// docs/cache.md), bounded and verified like every kind. Layout under the cache folder:
//   refs/<key[0:2]>/<key>/output.kvt   the reference's output (docs/tensor-file.md)
//   refs/<key[0:2]>/<key>/meta.json    {"input_digest": ...} (also the manifest's meta)
// Safe across threads and processes: computing an entry holds the entry's lock.
#include <functional>
#include <string>

#include "util/result.h"

namespace kvault {

struct ReferenceEntry {
  std::string output_path;
  std::string input_digest;
  bool hit = false;
};

class ReferenceCache {
 public:
  explicit ReferenceCache(std::string cache_dir);

  // Computes the entry's output by calling `compute(out_path)`, which writes the
  // output file and returns the input digest, unless a valid entry exists.
  Result<ReferenceEntry> GetOrCompute(
      const std::string& key, const std::function<Result<std::string>(const std::string&)>& compute);

 private:
  std::string root_;
};

}  // namespace kvault
