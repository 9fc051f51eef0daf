# KernelBench files in the habits of model-written CUDA (examples/kernelbench/*.llm-*.py
# meant for the cuda backend; some bind by hand with py::arg, one in cpp_sources beside
# cuda_sources, one leaves its GEMM to
# torch::matmul and dispatches on the deprecated x.type(), one uses AT_DISPATCH_SWITCH,
# packed accessors and a std::vector<int> parameter, one includes <torch/torch.h> and
# leaves other dtypes to torch::layer_norm) on a machine with nvcc and no GPU:
# `verify --compile-only` notes their load_inline calls in a device-less worker and
# compiles each one ahead, the lite way (a few seconds, not a minute of PyTorch's
# headers); a flag off nvcc's allow-list is a compile_error naming it.
source "$(dirname "$0")/lib.sh"
command -v "${KVAULT_NVCC:-nvcc}" >/dev/null || skip "nvcc not installed"
need_torch
ex="$KVAULT_SOURCE_ROOT/examples"
for file in relu.llm-habits softmax.llm-habits matmul.llm-cuda-pybind linear_relu.llm-cuda-hybrid \
  row_sum.llm-cuda-dispatch vector_add.llm-cpp-pybind layer_norm.llm-cuda-torch-ops; do
  c="$ex/kernelbench/$file.py"
  "$KVAULT" verify --task "$ex/suite/${file%%.*}.py" --candidate "$c" --backend cuda --arch sm_90 \
    --compile-only --json > "$TMP/o.json" || fail "verify exited $? for $c"
  [ "$(json_get "$TMP/o.json" 'j["status"]')" = compiled ] || { cat "$TMP/o.json"; fail "$c not compiled"; }
  [ "$(json_get "$TMP/o.json" 'j["reward"]')" = None ] || fail "$c: a compile-only check with a reward"
  json_get "$TMP/o.json" 'all(n["built"] and n["lite_ext"] for n in j["build"]["inline"]) and len(j["build"]["inline"]) == 1' \
    | grep -qx True || { cat "$TMP/o.json"; fail "$c: its load_inline call was not built ahead the lite way"; }
done
"$KVAULT" verify --task "$ex/suite/vector_add.py" --candidate "$ex/kernelbench/vector_add.flag-ccbin.py" \
  --backend cuda --arch sm_90 --compile-only --json > "$TMP/f.json" || fail "verify exited $? for the -ccbin cheat"
[ "$(json_get "$TMP/f.json" 'j["status"]')" = compile_error ] || { cat "$TMP/f.json"; fail "-ccbin was not refused"; }
json_get "$TMP/f.json" 'j["message"]' | grep -q "flag '-ccbin' is not allowed for nvcc" ||
  { cat "$TMP/f.json"; fail "the refused flag is not named"; }
echo "ok"
