// Broken on purpose: the native format builds without PyTorch, so its headers are
// not on the include path (compile_error).
#include <kvault/native.h>
#include <torch/extension.h>

extern "C" int kvault_forward(const kv_tensor*, int, const kv_scalar*, int, kv_tensor*, int, void*) {
  return 0;
}
