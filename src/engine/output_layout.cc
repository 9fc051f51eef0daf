#include "engine/output_layout.h"

namespace kvault {

Json OutputLayout(const TensorFile& file) {
  Json tensors = Json::array();
  for (size_t i = 0; i < file.num_tensors(); ++i) {
    const TensorInfo& t = file.tensor(i);
    tensors.push_back(Json{{"dtype", std::string(DTypeName(t.dtype))}, {"shape", t.shape}});
  }
  return Json{{"tree", file.tree()}, {"tensors", tensors}};
}

std::optional<uintmax_t> OutputLayoutBytes(const Json& layout) {
  if (!layout.is_object() || !layout.contains("tensors")) return std::nullopt;
  const Json& tensors = layout["tensors"];
  if (!tensors.is_array() || tensors.empty()) return std::nullopt;
  uintmax_t bytes = 0;
  for (const Json& t : tensors) {
    if (!t.is_object() || !t.contains("shape") || !t["shape"].is_array()) return std::nullopt;
    auto dtype = DTypeFromName(t.value("dtype", std::string()));
    if (!dtype) return std::nullopt;
    uintmax_t n = DTypeSize(*dtype);
    for (const Json& d : t["shape"]) n *= d.is_number_integer() && d.get<int64_t>() >= 0 ? d.get<uintmax_t>() : 0;
    bytes += n;
  }
  return bytes;
}

}  // namespace kvault
