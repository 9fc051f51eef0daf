#pragma once
// The layout of a reference output, without its values: what a native-format
// candidate's outputs must look like (docs/native-format.md). Sent to the candidate
// worker in the `run` request (docs/worker-protocol.md, "output_layout").
//
//   auto ref = TensorFile::Open(path);
//   request["output_layout"] = OutputLayout(*ref);
//   // {"tree": {"kind":"tensor","index":0}, "tensors": [{"dtype":"float32","shape":[4,5]}]}
#include <cstdint>
#include <optional>

#include "check/tensor_file.h"
#include "util/json.h"

namespace kvault {

// {"tree": <the file's tree>, "tensors": [{"dtype", "shape"}, ...]} in the file's
// tensor order. Strides, devices and offsets are left out.
Json OutputLayout(const TensorFile& file);

// The bytes of the tensors a layout lists (what one output takes); nullopt when it
// lists none, or one with an unknown dtype or no shape. A dimension that is not a
// whole number counts as empty.
std::optional<uintmax_t> OutputLayoutBytes(const Json& layout);

}  // namespace kvault
