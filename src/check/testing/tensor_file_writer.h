#pragma once
// Test-only: builds tensor files (docs/tensor-file.md) in memory, including malformed
// ones. Header-only so any component's tests can use it without linking extra code.
//
//   testing::TensorFileWriter w;
//   Json a = w.Add<float>({2, 3}, {1, 2, 3, 4, 5, 6});
//   w.SetTree(testing::TupleNode({a, testing::IntNode(3)}));
//   ASSERT_TRUE(w.WriteTo(dir + "/out.kvt"));
//   auto f = TensorFile::FromBytes(w.Bytes());
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "check/dtype.h"
#include "util/files.h"
#include "util/json.h"
#include "util/result.h"

namespace kvault::testing {

// float -> IEEE binary16 bits, rounding to nearest even; overflow gives infinity,
// NaN stays NaN (quiet).
inline uint16_t FloatToHalfBits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 rounds to inf (or is inf)
  if (abs < 0x38800000u) {                        // below 2^-14: subnormal or zero
    // value * 2^24 rounded to nearest even is the subnormal mantissa.
    float scaled = std::bit_cast<float>(abs) * 0x1p24f;
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));
  }
  uint32_t mantissa = abs & 0x7fffffu;
  uint32_t exponent = (abs >> 23) - 112;
  uint32_t half = (exponent << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // carries into exponent correctly
  return sign | static_cast<uint16_t>(half);
}

// float -> bfloat16 bits, rounding to nearest even; NaN stays NaN (quiet).
inline uint16_t FloatToBFloat16Bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

// Tree nodes.
inline Json TensorNode(int64_t index) { return {{"kind", "tensor"}, {"index", index}}; }
inline Json TupleNode(std::vector<Json> items) { return {{"kind", "tuple"}, {"items", std::move(items)}}; }
inline Json ListNode(std::vector<Json> items) { return {{"kind", "list"}, {"items", std::move(items)}}; }
inline Json DictNode(std::vector<std::pair<std::string, Json>> entries) {
  Json keys = Json::array(), items = Json::array();
  for (auto& [k, v] : entries) {
    keys.push_back(k);
    items.push_back(std::move(v));
  }
  return {{"kind", "dict"}, {"keys", std::move(keys)}, {"items", std::move(items)}};
}
inline Json IntNode(int64_t v) { return {{"kind", "int"}, {"value", v}}; }
inline Json FloatNode(double v) {
  Json value = v;
  if (std::isnan(v)) value = "nan";
  if (std::isinf(v)) value = v > 0 ? "inf" : "-inf";
  return {{"kind", "float"}, {"value", std::move(value)}};
}
inline Json BoolNode(bool v) { return {{"kind", "bool"}, {"value", v}}; }
inline Json NoneNode() { return {{"kind", "none"}}; }
inline Json StrNode(std::string v) { return {{"kind", "str"}, {"value", std::move(v)}}; }
inline Json UnsupportedNode(std::string type) { return {{"kind", "unsupported"}, {"type", std::move(type)}}; }

template <class T> struct DTypeOf;
template <> struct DTypeOf<double> { static constexpr DType value = DType::kFloat64; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::kFloat32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::kInt64; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::kInt32; };
template <> struct DTypeOf<int16_t> { static constexpr DType value = DType::kInt16; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::kInt8; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::kUInt8; };

// Assembles magic, header length, header, zero padding to 64 and data.
inline std::string AssembleTensorFile(std::string_view header_text, std::string_view data,
                                      std::string_view magic = "KVTENS01") {
  std::string out(magic);
  uint64_t len = header_text.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  out += header_text;
  out.resize((out.size() + 63) / 64 * 64, '\0');
  out += data;
  return out;
}

// Collects tensors and a tree; Bytes() serialises them. By default the tree is a
// tuple of every tensor added, in order.
class TensorFileWriter {
 public:
  // Adds a tensor from raw little-endian bytes (nbytes is taken from `bytes`, so a
  // wrong size makes a malformed file). Returns its tree node.
  Json AddRaw(DType dtype, std::vector<int64_t> shape, std::string bytes, std::string device = "cpu") {
    std::vector<int64_t> strides(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<int64_t>(shape[i], 1);
    size_t offset = (data_.size() + 63) / 64 * 64;
    data_.resize(offset, '\0');
    data_ += bytes;
    tensors_.push_back({{"dtype", std::string(DTypeName(dtype))},
                        {"shape", shape},
                        {"strides", strides},
                        {"device", std::move(device)},
                        {"offset", offset},
                        {"nbytes", bytes.size()}});
    return TensorNode(static_cast<int64_t>(tensors_.size() - 1));
  }
  template <class T>
  Json Add(std::vector<int64_t> shape, const std::vector<T>& values) {
    std::string bytes(values.size() * sizeof(T), '\0');
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return AddRaw(DTypeOf<T>::value, std::move(shape), std::move(bytes));
  }
  Json AddBool(std::vector<int64_t> shape, const std::vector<bool>& values) {
    std::string bytes;
    for (bool b : values) bytes.push_back(b ? 1 : 0);
    return AddRaw(DType::kBool, std::move(shape), std::move(bytes));
  }
  // float16 / bfloat16 tensors from float values (rounded) or from raw bit patterns.
  Json AddHalf(std::vector<int64_t> shape, const std::vector<float>& values) {
    return AddBits(DType::kFloat16, std::move(shape), values, &FloatToHalfBits);
  }
  Json AddBFloat16(std::vector<int64_t> shape, const std::vector<float>& values) {
    return AddBits(DType::kBFloat16, std::move(shape), values, &FloatToBFloat16Bits);
  }
  Json AddBits16(DType dtype, std::vector<int64_t> shape, const std::vector<uint16_t>& bits) {
    std::string bytes(bits.size() * 2, '\0');
    if (!bits.empty()) std::memcpy(bytes.data(), bits.data(), bytes.size());
    return AddRaw(dtype, std::move(shape), std::move(bytes));
  }

  void SetTree(Json tree) { tree_ = std::move(tree); }
  // Tensor metadata, editable to make malformed files.
  Json& tensor_meta(size_t i) { return tensors_[i]; }
  // Data section bytes, editable (e.g. resize to truncate).
  std::string& data() { return data_; }

  Json Header() const {
    Json tree = tree_;
    if (tree.is_null()) {
      std::vector<Json> items;
      for (size_t i = 0; i < tensors_.size(); ++i) items.push_back(TensorNode(static_cast<int64_t>(i)));
      tree = TupleNode(std::move(items));
    }
    return {{"version", 1}, {"tree", std::move(tree)}, {"tensors", tensors_}};
  }
  std::string Bytes() const { return AssembleTensorFile(Header().dump(), data_); }
  Status WriteTo(const std::string& path) const { return WriteFileAtomic(path, Bytes()); }

 private:
  Json AddBits(DType dtype, std::vector<int64_t> shape, const std::vector<float>& values,
               uint16_t (*convert)(float)) {
    std::vector<uint16_t> bits;
    for (float v : values) bits.push_back(convert(v));
    return AddBits16(dtype, std::move(shape), bits);
  }

  Json tree_;
  Json tensors_ = Json::array();
  std::string data_;
};

}  // namespace kvault::testing
