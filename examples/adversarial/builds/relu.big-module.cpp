// Attack on the cache and the host's disk, through the compile: an honest native relu
// whose source holds a static array of 1 GiB with one byte set, so the assembler and
// the linker write a module of 1 GiB (a load_inline source did the same). It passed,
// and its module stayed in the compile cache (which every client of a `kvault serve`
// shares, and which evicts others' entries to stay under KVAULT_CACHE_MAX_GB); a few
// such sources a minute fill a disk. A compile may now write files of at most 512 MiB
// (less when KVAULT_SANDBOX_FILE_MB says so): the assembler or the linker is stopped,
// the candidate's compile_error. Checked by tests/integration/test_build_sandbox.sh
// (with KVAULT_SANDBOX_FILE_MB=64).
#include <kvault/native.h>

__attribute__((used)) static char kvault_adv_ballast[1L << 30] = {1};

static const char* g_error = "";

extern "C" const char* kvault_last_error(void) { return g_error; }

extern "C" int kvault_forward(const kv_tensor* inputs, int num_inputs, const kv_scalar* scalars,
                              int num_scalars, kv_tensor* outputs, int num_outputs, void* stream) {
  (void)scalars; (void)num_scalars; (void)stream;
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].dtype != KV_FLOAT32) {
    g_error = "relu: expected one float32 input and one output";
    return 1;
  }
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t i = 0; i < inputs[0].numel; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return 0;
}
