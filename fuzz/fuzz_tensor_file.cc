// Fuzzes the tensor-file reader (docs/tensor-file.md) with arbitrary bytes, as an
// untrusted worker could write them, then reads every element of every tensor the
// reader accepted and compares the file with itself.
#include <cstddef>
#include <cstdint>
#include <string>

#include "check/compare.h"
#include "check/tensor_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = kvault::TensorFile::FromBytes(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
  if (!file) return 0;
  volatile double sink = 0;
  for (size_t i = 0; i < file->num_tensors(); ++i) {
    const kvault::TensorInfo& t = file->tensor(i);
    for (int64_t e = 0; e < t.numel; ++e) sink = sink + kvault::ElementAsDouble(t.dtype, t.data, e);
  }
  kvault::CompareReport r = kvault::Compare(*file, *file, kvault::Tolerance{});
  (void)r;
  return 0;
}
