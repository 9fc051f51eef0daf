// Fuzzes Compare on two tensor files. Input layout:
//   byte 0       options: bit 0 NaN policy forbid, bit 1 rtol/atol = 0, bit 2 rtol/atol = 1
//   bytes 1..4   n, little endian: length of the reference file
//   next n bytes the reference file, the rest the candidate file
// fuzz/make_fuzz_seeds writes seeds in this layout.
#include <cstddef>
#include <cstdint>
#include <string>

#include "check/compare.h"
#include "check/tensor_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  const uint8_t options = data[0];
  size_t n = size_t{data[1]} | size_t{data[2]} << 8 | size_t{data[3]} << 16 | size_t{data[4]} << 24;
  data += 5;
  size -= 5;
  if (n > size) n = size;
  const char* bytes = reinterpret_cast<const char*>(data);
  auto ref = kvault::TensorFile::FromBytes(std::string(bytes, n), "ref");
  if (!ref) return 0;
  auto cand = kvault::TensorFile::FromBytes(std::string(bytes + n, size - n), "cand");
  if (!cand) return 0;
  kvault::Tolerance tol;
  if (options & 1) tol.nan_policy = kvault::Tolerance::NanPolicy::kForbid;
  if (options & 2) tol.rtol = tol.atol = 0.0;
  if (options & 4) tol.rtol = tol.atol = 1.0;
  kvault::CompareReport r = kvault::Compare(*ref, *cand, tol);
  if (r.mismatched > r.compared) __builtin_trap();  // a report that contradicts itself
  return 0;
}
