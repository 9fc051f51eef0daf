#include "toolchain/build_key.h"

#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include "util/files.h"

namespace kvault {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxLocalIncludes = 256;
// The largest included file whose bytes go into the key (a header, not a data file).
constexpr uint64_t kMaxLocalIncludeBytes = uint64_t{16} << 20;

// The bytes of an included file for the key, or why they are not there. The engine
// reads them itself, outside the sandbox, from a name the candidate wrote: only a
// regular file of bounded size inside the source's folder (links resolved) is read.
// `#include "/dev/zero"` in a candidate's source read until the engine aborted
// (std::bad_alloc); a FIFO would have held its thread for good.
// `real_base`: the source's folder, links resolved (empty when it could not be).
std::optional<std::string> IncludedBytes(const fs::path& p, const fs::path& real_base, std::string* why) {
  std::error_code ec;
  const fs::path real = fs::canonical(p, ec);
  *why = "<missing>";
  if (ec || real_base.empty()) return std::nullopt;
  const fs::path rel = real.lexically_relative(real_base);
  *why = "<outside the source's folder: not read>";
  if (rel.empty() || rel.is_absolute() || *rel.begin() == "..") return std::nullopt;
  auto bytes = ReadRegularFile(real.string(), kMaxLocalIncludeBytes);
  *why = "<not a regular file of at most 16 MiB: not read>";
  if (!bytes) return std::nullopt;
  return std::move(*bytes);
}

// torch/version.h from the first include path holding it, "" if none.
std::string TorchVersionHeader(const TorchBuildInfo& torch) {
  for (const std::string& dir : torch.include_paths) {
    for (const char* rel : {"/torch/version.h", "/torch/csrc/api/include/torch/version.h"}) {
      if (auto text = ReadFile(dir + rel)) return *text;
    }
  }
  return "";
}

// "<resolved path> <size> <mtime ns>", or the reason it cannot be had.
std::string BinaryIdentity(const std::string& path) {
  std::error_code ec;
  fs::path resolved = fs::canonical(path, ec);
  if (ec) return "unresolved " + path;
  struct stat st;
  if (::stat(resolved.c_str(), &st) != 0) return "unreadable " + resolved.string();
  return resolved.string() + " " + std::to_string(st.st_size) + " " +
         std::to_string(static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec);
}

// The quoted names of `#include "name"` directives in `text`, in order.
std::vector<std::string> QuotedIncludes(std::string_view text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    std::string_view line = text.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
    pos = eol == std::string_view::npos ? text.size() : eol + 1;
    size_t i = line.find_first_not_of(" \t");
    if (i == std::string_view::npos || line[i] != '#') continue;
    i = line.find_first_not_of(" \t", i + 1);
    if (i == std::string_view::npos || line.substr(i, 7) != "include") continue;
    i = line.find_first_not_of(" \t", i + 7);
    if (i == std::string_view::npos || line[i] != '"') continue;
    size_t close = line.find('"', i + 1);
    if (close == std::string_view::npos || close == i + 1) continue;
    out.emplace_back(line.substr(i + 1, close - i - 1));
  }
  return out;
}

}  // namespace

void AddToolchainKeyFields(KeyHasher& h, const std::string& compiler_identity,
                           const std::string& compiler_path, const TorchBuildInfo& torch) {
  h.Add("compiler", compiler_identity);
  h.Add("compiler_binary", BinaryIdentity(compiler_path));
  h.Add("torch_version", torch.torch_version);
  h.Add("torch_version_header", TorchVersionHeader(torch));
  std::vector<std::string> dirs = torch.include_paths;
  if (!torch.python_include.empty()) dirs.push_back(torch.python_include);
  h.Add("torch_headers", DirectoryListingDigest(dirs));
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

std::string DirectoryListingDigest(const std::vector<std::string>& dirs) {
  static std::mutex mu;
  static std::map<std::vector<std::string>, std::string> cache;
  // Remembered by folder list and the folders' own modification times (a file added
  // to or removed from a top-level folder walks again).
  std::vector<std::string> memo_key = dirs;
  for (const std::string& dir : dirs) {
    struct stat st;
    memo_key.push_back(::stat(dir.c_str(), &st) == 0 ? std::to_string(st.st_mtim.tv_sec) + "." +
                                                           std::to_string(st.st_mtim.tv_nsec)
                                                     : "-");
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(memo_key); it != cache.end()) return it->second;
  }
  KeyHasher h;
  for (const std::string& dir : dirs) {
    std::vector<std::string> lines;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it); it.increment(ec)) {
      struct stat st;
      if (::stat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      lines.push_back(fs::relative(it->path(), dir, ec).string() + " " + std::to_string(st.st_size) + " " +
                      std::to_string(static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 +
                                     st.st_mtim.tv_nsec));
    }
    std::sort(lines.begin(), lines.end());
    std::string all;
    for (const std::string& l : lines) all += l + "\n";
    h.Add(dir, all);
  }
  std::string digest = h.Hex();
  std::lock_guard<std::mutex> lock(mu);
  cache[memo_key] = digest;
  return digest;
}

void AddLocalIncludeFields(KeyHasher& h, const std::string& source_path, std::string_view source) {
  const fs::path base = fs::path(source_path).parent_path();
  std::error_code base_ec;
  const fs::path real_base = fs::canonical(base.empty() ? fs::path(".") : base, base_ec);
  std::set<std::string> seen;
  // (file that includes, its text) still to scan.
  std::deque<std::pair<fs::path, std::string>> todo;
  todo.emplace_back(fs::path(source_path), std::string(source));
  while (!todo.empty() && seen.size() < kMaxLocalIncludes) {
    auto [from, text] = std::move(todo.front());
    todo.pop_front();
    for (const std::string& name : QuotedIncludes(text)) {
      fs::path p = (from.parent_path() / name).lexically_normal();
      std::string rel = p.lexically_relative(base).string();
      if (rel.empty()) rel = p.string();
      if (!seen.insert(rel).second) continue;
      std::string why;
      auto bytes = IncludedBytes(p, base_ec ? fs::path() : real_base, &why);
      h.Add("local_include", rel + "\n" + (bytes ? *bytes : why));
      if (bytes) todo.emplace_back(p, std::move(*bytes));
      if (seen.size() >= kMaxLocalIncludes) break;
    }
  }
}

}  // namespace kvault
