// Broken on purpose: reports a failure (error code 7 and a message) on every call.
#include <kvault/native.h>

extern "C" const char* kvault_last_error(void) { return "relu: unsupported tile size"; }

extern "C" int kvault_forward(const kv_tensor*, int, const kv_scalar*, int, kv_tensor*, int, void*) {
  return 7;
}
