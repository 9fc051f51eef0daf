#include "check/tensor_file.h"

#include <cstring>
#include <limits>
#include <optional>

#include "util/json_parse.h"

namespace kvault {
namespace {

constexpr char kMagic[8] = {'K', 'V', 'T', 'E', 'N', 'S', '0', '1'};
constexpr uint64_t kPreamble = 16;  // magic + header_len
constexpr uint64_t kAlignment = 64;
constexpr size_t kMaxRank = 64;
// Tree nodes nest two JSON levels each (node object, items array), plus the header.
constexpr size_t kMaxHeaderJsonDepth = 2 * kMaxTensorTreeDepth + 8;

std::optional<uint64_t> AsU64(const Json& j) {
  if (j.is_number_unsigned()) return j.get<uint64_t>();
  if (j.is_number_integer() && j.get<int64_t>() >= 0) return static_cast<uint64_t>(j.get<int64_t>());
  return std::nullopt;
}

std::optional<int64_t> AsI64(const Json& j) {
  if (j.is_number_unsigned()) {
    uint64_t v = j.get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(v);
  }
  if (j.is_number_integer()) return j.get<int64_t>();
  return std::nullopt;
}

const Json* Field(const Json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string ShapeText(const Json& shape) { return shape.dump(); }

// Validates tensors[i] and fills `out`. Returns an error message or "".
std::string ParseTensor(const Json& t, size_t i, uint64_t data_size, TensorInfo& out) {
  const std::string where = "tensors[" + std::to_string(i) + "]: ";
  if (!t.is_object()) return where + "not an object";
  const Json* dtype = Field(t, "dtype");
  if (!dtype || !dtype->is_string()) return where + "dtype missing or not a string";
  auto parsed = DTypeFromName(dtype->get<std::string>());
  if (!parsed) return where + "unknown dtype '" + dtype->get<std::string>() + "'";
  out.dtype = *parsed;

  const Json* shape = Field(t, "shape");
  if (!shape || !shape->is_array() || shape->size() > kMaxRank) {
    return where + "shape missing, not an array, or more than 64 dimensions";
  }
  uint64_t numel = 1;
  bool overflow = false;
  for (const Json& d : *shape) {
    auto v = AsI64(d);
    if (!v || *v < 0) return where + "shape " + ShapeText(*shape) + " has an entry that is not a non-negative integer";
    out.shape.push_back(*v);
    overflow |= __builtin_mul_overflow(numel, static_cast<uint64_t>(*v), &numel);
  }
  if (overflow || numel > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return where + "shape " + ShapeText(*shape) + " has more elements than fit in 64 bits";
  }
  out.numel = static_cast<int64_t>(numel);

  const Json* strides = Field(t, "strides");
  if (!strides || !strides->is_array() || strides->size() != shape->size()) {
    return where + "strides missing or not an array as long as shape";
  }
  for (const Json& s : *strides) {
    auto v = AsI64(s);
    if (!v) return where + "strides must be 64-bit integers";
    out.strides.push_back(*v);
  }
  const Json* device = Field(t, "device");
  if (!device || !device->is_string()) return where + "device missing or not a string";
  out.device = device->get<std::string>();

  const Json* offset = Field(t, "offset");
  const Json* nbytes = Field(t, "nbytes");
  auto off = offset ? AsU64(*offset) : std::nullopt;
  auto nb = nbytes ? AsU64(*nbytes) : std::nullopt;
  if (!off || !nb) return where + "offset and nbytes must be non-negative integers";
  out.offset = *off;
  out.nbytes = *nb;
  uint64_t expected = 0;
  if (__builtin_mul_overflow(numel, DTypeSize(out.dtype), &expected)) {
    return where + "shape " + ShapeText(*shape) + " is too large for 64-bit byte counts";
  }
  if (expected != out.nbytes) {
    return where + "nbytes " + std::to_string(out.nbytes) + " != " + std::to_string(numel) +
           " elements * " + std::to_string(DTypeSize(out.dtype)) + " bytes";
  }
  if (out.offset % kAlignment != 0) {
    return where + "offset " + std::to_string(out.offset) + " is not a multiple of 64";
  }
  if (out.offset > data_size || out.nbytes > data_size - out.offset) {
    return where + "bytes [" + std::to_string(out.offset) + ", +" + std::to_string(out.nbytes) +
           ") lie outside the " + std::to_string(data_size) + "-byte data section (truncated file?)";
  }
  return "";
}

// Validates one tree node and everything below it. Returns an error message or "".
std::string CheckNode(const Json& node, size_t num_tensors, int depth, const std::string& path) {
  if (depth > kMaxTensorTreeDepth) {
    return "tree nested deeper than " + std::to_string(kMaxTensorTreeDepth) + " levels";
  }
  const std::string where = path + ": ";
  if (!node.is_object()) return where + "node is not an object";
  const Json* kind_field = Field(node, "kind");
  if (!kind_field || !kind_field->is_string()) return where + "node has no kind";
  const std::string kind = kind_field->get<std::string>();
  const Json* value = Field(node, "value");
  if (kind == "tensor") {
    const Json* index = Field(node, "index");
    auto i = index ? AsU64(*index) : std::nullopt;
    if (!i || *i >= num_tensors) {
      return where + "tensor index " + (index ? index->dump() : "missing") + " is not below " +
             std::to_string(num_tensors);
    }
    return "";
  }
  if (kind == "tuple" || kind == "list" || kind == "dict") {
    const Json* items = Field(node, "items");
    if (!items || !items->is_array()) return where + kind + " without an items array";
    const Json* keys = nullptr;
    if (kind == "dict") {
      keys = Field(node, "keys");
      if (!keys || !keys->is_array() || keys->size() != items->size()) {
        return where + "dict keys missing or not as many as items";
      }
      for (const Json& k : *keys) {
        if (!k.is_string()) return where + "dict key is not a string";
      }
    }
    for (size_t i = 0; i < items->size(); ++i) {
      std::string child = keys ? path + "['" + (*keys)[i].get<std::string>() + "']"
                               : path + "[" + std::to_string(i) + "]";
      std::string err = CheckNode((*items)[i], num_tensors, depth + 1, child);
      if (!err.empty()) return err;
    }
    return "";
  }
  if (kind == "int") {
    if (!value || !value->is_number_integer()) return where + "int node without an integer value";
    return "";
  }
  if (kind == "float") {
    bool ok = value && (value->is_number() ||
                        (value->is_string() && (*value == "nan" || *value == "inf" || *value == "-inf")));
    return ok ? "" : where + "float node without a number (or \"nan\", \"inf\", \"-inf\")";
  }
  if (kind == "bool") return value && value->is_boolean() ? "" : where + "bool node without a boolean";
  if (kind == "str") return value && value->is_string() ? "" : where + "str node without a string";
  if (kind == "none") return "";
  if (kind == "unsupported") {
    const Json* type = Field(node, "type");
    return type && type->is_string() ? "" : where + "unsupported node without a type";
  }
  return where + "unknown node kind '" + kind + "'";
}

}  // namespace

Result<TensorFile> TensorFile::Open(const std::string& path, uint64_t max_bytes) {
  auto map = MappedFile::Open(path, max_bytes);
  if (!map) return Error{map.error()};
  TensorFile file;
  file.name_ = path;
  file.map_ = std::move(*map);
  const std::byte* base = file.map_.data();
  size_t size = file.map_.size();
  return Parse(std::move(file), base, size);
}

Result<TensorFile> TensorFile::FromBytes(std::string bytes, const std::string& name) {
  TensorFile file;
  file.name_ = name;
  file.owned_ = std::make_unique<std::vector<std::byte>>(bytes.size());
  if (!bytes.empty()) std::memcpy(file.owned_->data(), bytes.data(), bytes.size());
  const std::byte* base = file.owned_->data();
  size_t size = file.owned_->size();
  return Parse(std::move(file), base, size);
}

Result<TensorFile> TensorFile::Parse(TensorFile file, const std::byte* base, size_t size) {
  auto fail = [&](const std::string& message) { return Error{file.name_ + ": " + message}; };
  if (size < kPreamble) {
    return fail("truncated: " + std::to_string(size) + " bytes, shorter than the 16-byte preamble");
  }
  if (std::memcmp(base, kMagic, sizeof kMagic) != 0) return fail("bad magic (not a KVTENS01 tensor file)");
  uint64_t header_len = LoadUnaligned<uint64_t>(base + 8);
  if (header_len > size - kPreamble) {
    return fail("truncated: header of " + std::to_string(header_len) + " bytes does not fit in the " +
                std::to_string(size) + "-byte file");
  }
  uint64_t data_start = (kPreamble + header_len + kAlignment - 1) / kAlignment * kAlignment;
  uint64_t data_size = size > data_start ? size - data_start : 0;
  std::string_view header_text(reinterpret_cast<const char*>(base + kPreamble), header_len);
  auto header = ParseJson(header_text, kMaxHeaderJsonDepth);
  if (!header) {
    if (header.error().starts_with("JSON nested deeper")) {
      return fail("tree nested deeper than " + std::to_string(kMaxTensorTreeDepth) + " levels");
    }
    return fail("header is not valid JSON: " + header.error());
  }
  if (!header->is_object()) return fail("header is not a JSON object");
  const Json* version = Field(*header, "version");
  if (!version || *version != 1) {
    return fail("unsupported version " + (version ? version->dump() : std::string("(missing)")));
  }
  const Json* tensors = Field(*header, "tensors");
  if (!tensors || !tensors->is_array()) return fail("header has no tensors array");
  for (size_t i = 0; i < tensors->size(); ++i) {
    TensorInfo info;
    std::string err = ParseTensor((*tensors)[i], i, data_size, info);
    if (!err.empty()) return fail(err);
    if (info.nbytes > 0) info.data = base + data_start + info.offset;
    file.tensors_.push_back(std::move(info));
  }
  const Json* tree = Field(*header, "tree");
  if (!tree) return fail("header has no tree");
  std::string err = CheckNode(*tree, file.tensors_.size(), 1, "tree");
  if (!err.empty()) return fail(err);
  file.tree_ = std::move((*header)["tree"]);
  return file;
}

}  // namespace kvault
