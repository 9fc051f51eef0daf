#pragma once
// TensorFile: a validated, memory-mapped tensor file (docs/tensor-file.md). Open()
// checks everything a comparison relies on, so that no input, however malformed,
// can crash the engine; every violation is an Error with a one-line message.
//
// Immutable after Open; const access is thread-safe. Movable, not copyable; tensor
// data pointers stay valid across moves for the object's lifetime.
//
//   auto f = TensorFile::Open("/cache/ref.kvt");
//   if (!f) return Error{f.error()};
//   const TensorInfo& t = f->tensor(0);
//   double x = ElementAsDouble(t.dtype, t.data, 0);
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "check/dtype.h"
#include "util/json.h"
#include "util/mapped_file.h"
#include "util/result.h"

namespace kvault {

// Deepest nesting of tree nodes accepted (a tensor at the root is depth 1).
inline constexpr int kMaxTensorTreeDepth = 64;

struct TensorInfo {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;    // each >= 0
  std::vector<int64_t> strides;  // in elements, as returned by the model; informational
  std::string device;            // e.g. "cuda:0", "cpu"
  uint64_t offset = 0;           // from the start of the data section; a multiple of 64
  uint64_t nbytes = 0;           // == numel * DTypeSize(dtype)
  int64_t numel = 0;             // product of shape (1 for a 0-d tensor)
  // numel values in C order, little endian; nullptr when nbytes == 0.
  const std::byte* data = nullptr;
};

class TensorFile {
 public:
  // Maps and validates `path`: a regular file of at most `max_bytes`
  // (MappedFile::Open). Messages start with the path.
  static Result<TensorFile> Open(const std::string& path,
                                 uint64_t max_bytes = std::numeric_limits<uint64_t>::max());
  // Validates an in-memory file (tests, fuzzing). `name` prefixes messages.
  static Result<TensorFile> FromBytes(std::string bytes, const std::string& name = "<memory>");

  // The validated tree: every node has a known kind, every tensor index is valid,
  // depth <= kMaxTensorTreeDepth (see docs/tensor-file.md for the node grammar).
  const Json& tree() const { return tree_; }
  // The file's size in bytes.
  size_t file_bytes() const { return map_.size(); }
  size_t num_tensors() const { return tensors_.size(); }
  // REQUIRES: i < num_tensors().
  const TensorInfo& tensor(size_t i) const { return tensors_[i]; }
  const std::string& name() const { return name_; }

 private:
  TensorFile() = default;
  static Result<TensorFile> Parse(TensorFile file, const std::byte* base, size_t size);

  std::string name_;
  MappedFile map_;                                // when opened from a path
  std::unique_ptr<std::vector<std::byte>> owned_;  // when made from bytes
  Json tree_;
  std::vector<TensorInfo> tensors_;
};

}  // namespace kvault
