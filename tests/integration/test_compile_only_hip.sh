# `verify --compile-only --backend hip --arch gfx90a` works on a machine with no GPU.
source "$(dirname "$0")/lib.sh"
command -v "${KVAULT_HIPCC:-hipcc}" >/dev/null || skip "hipcc not installed"
need_torch
ex="$KVAULT_SOURCE_ROOT/examples"
n=0
# Each build parses PyTorch's headers (minutes of CI's CPU): fp16 and a shared-memory
# reduction by default; KVAULT_LONG_TESTS=1 adds fp32 with a functional twin and bf16.
stems=(gelu_tanh softmax)
[ "${KVAULT_LONG_TESTS:-0}" = 1 ] && stems+=(layer_norm swiglu)
for stem in "${stems[@]}"; do
  c="$ex/hip/$stem.hip"
  "$KVAULT" verify --task "$ex/suite/$stem.py" --candidate "$c" --backend hip --arch gfx90a \
    --compile-only --json > "$TMP/o.json" || fail "verify exited $? for $c"
  s=$(json_get "$TMP/o.json" 'j["status"]')
  [ "$s" = compiled ] || { cat "$TMP/o.json"; fail "$c: $s"; }
  # Nothing ran, so no reward; the build is where its time went.
  [ "$(json_get "$TMP/o.json" 'j["reward"], "build" in j["phases"]')" = "None True" ] ||
    { cat "$TMP/o.json"; fail "$c: a reward, or no build phase"; }
  n=$((n+1))
done
[ "$n" -eq "${#stems[@]}" ] || fail "only $n HIP solutions compiled"
# A broken source is a compile_error with diagnostics, exit 0. Its fatal error (a header
# that does not exist) comes before PyTorch's headers, so hipcc stops before parsing
# them (20 s instead of a minute of CI's CPU; any other error parses them first).
printf '#include <hip/hip_runtime.h>\n#include <kvault_no_such_header.h>\n#include <torch/extension.h>\n__global__ void k( { }\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {}\n' > "$TMP/broken.hip"
"$KVAULT" verify --task "$ex/suite/relu.py" --candidate "$TMP/broken.hip" --backend hip --arch gfx90a \
  --compile-only --json > "$TMP/b.json" || fail "exit $? for a compile error"
[ "$(json_get "$TMP/b.json" 'j["status"]')" = compile_error ] || fail "broken source not a compile_error"
json_get "$TMP/b.json" 'j["diagnostics"]' | grep kvault_no_such_header >/dev/null || fail "no diagnostics"
# A native-format HIP source (no PyTorch headers, so no compile-only shims) compiles too.
"$KVAULT" verify --task "$ex/suite/softmax.py" --candidate "$ex/native/hip/softmax.hip" --backend hip \
  --arch gfx90a --compile-only --json > "$TMP/n.json" || fail "verify exited $? for the native HIP source"
[ "$(json_get "$TMP/n.json" 'j["status"]')" = compiled ] || { cat "$TMP/n.json"; fail "native HIP source not compiled"; }
json_get "$TMP/n.json" 'j["build"]["toolchain"]' | grep native >/dev/null || fail "native HIP source not built as native"
echo "ok: $n HIP solutions and one native HIP source compiled for gfx90a"
