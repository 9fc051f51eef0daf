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

}  // namespace kvault
