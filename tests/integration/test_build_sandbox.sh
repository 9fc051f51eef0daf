#!/usr/bin/env bash
# A candidate's compile runs in the sandbox (docs/sandbox.md, "Builds"): an #include of
# a file the candidate's worker may not read (the reference cache, a folder of
# KVAULT_SANDBOX_HIDE) finds nothing, so the compiler's diagnostics, which reach the
# store and an LLM's feedback, never quote it. The same candidate with KVAULT_SANDBOX=off
# quotes the planted line, which shows the check can fail.
source "$(dirname "$0")/lib.sh"
need_torch
probe=$("$KVAULT" sandbox-exec --probe) || fail "sandbox probe failed: $probe"
for layer in user_namespace mount_namespace hidden_paths; do
  why=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['$layer'])" "$probe")
  [ -z "$why" ] || skip "sandbox layer $layer unavailable here: $why"
done

secret=KV_PLANTED_LINE_$$_$RANDOM
refs_file="$KVAULT_CACHE_DIR/refs/planted-$$-$RANDOM.h"
mkdir -p "$KVAULT_CACHE_DIR/refs" "$TMP/hidden"
trap 'rm -rf "$TMP" "$refs_file"' EXIT
echo "$secret is what a reference output holds" > "$refs_file"
echo "$secret is what a hidden folder holds" > "$TMP/hidden/secret.h"

# CANDIDATE INCLUDED: a C++ extension for examples/suite/relu.py that includes a host file.
write_candidate() {
  cat > "$1" <<CPP
#include <torch/extension.h>
#include "$2"
torch::Tensor forward(torch::Tensor x) { return torch::relu(x); }
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward); }
CPP
}
write_candidate "$TMP/relu_refs.cpp" "$refs_file"
write_candidate "$TMP/relu_hidden.cpp" "$TMP/hidden/secret.h"

verify() {  # OUT CANDIDATE [env...]: the verify JSON in OUT
  local out=$1 cand=$2
  shift 2
  env "$@" "$KVAULT" verify --task "$KVAULT_SOURCE_ROOT/examples/suite/relu.py" --candidate "$cand" \
    --backend cpu --json > "$out" 2> "$out.err"
}
verify "$TMP/refs.json" "$TMP/relu_refs.cpp"
verify "$TMP/hidden.json" "$TMP/relu_hidden.cpp" KVAULT_SANDBOX_HIDE="$TMP/hidden"
for r in refs hidden; do
  status=$(json_get "$TMP/$r.json" 'j["status"]') || fail "$r: no JSON: $(head -c 600 "$TMP/$r.json.err")"
  [ "$status" = compile_error ] || fail "$r: expected compile_error, got $status"
  grep -q "$secret" "$TMP/$r.json" "$TMP/$r.json.err" && fail "$r: the planted line reached the record"
  grep -Eq "No such file|Permission denied" "$TMP/$r.json" || fail "$r: the compiler did not report an unreadable file"
  echo "sandboxed $r: compile_error, nothing quoted"
done

# examples/adversarial/builds, what a compile could do to the host:
# - relu.include-zero-live includes /dev/zero outside an #if 0: cc1plus reads it into a
#   buffer it doubles without end (a GB a second; unbounded before, the host ran out
#   of memory). The compile's heap limit (KVAULT_SANDBOX_MEMORY_MB) stops it at a
#   buffer under 2 GiB. The outer address-space limit only keeps a regression from
#   taking the machine with it (it would stop cc1plus at 4-8 GiB, which is refused).
# - relu.big-module writes a module of 1 GiB, which passed and stayed in the cache: the
#   compile's file size limit (here 64 MiB, to fail in seconds) stops the assembler.
adv="$KVAULT_SOURCE_ROOT/examples/adversarial"
(ulimit -v 8000000
 KVAULT_SANDBOX_MEMORY_MB=1536 KVAULT_SANDBOX_FILE_MB=64 "$KVAULT" eval --suite "$adv/tasks" \
   --candidates "$adv/builds" --backend cpu --jobs 1 --no-timing --db "$TMP/builds.db" --json \
   > "$TMP/builds.json" 2> "$TMP/builds.err") || fail "eval of builds/ exited $?: $(tail -c 600 "$TMP/builds.err")"
python3 "$KVAULT_SOURCE_ROOT/tests/integration/check_manifest.py" --backend cpu "$adv/adversarial.json" \
  "builds=$TMP/builds.json" || fail "builds/ does not match the manifest"
python3 - "$TMP/builds.db" <<'PY' || fail "a compile was not stopped by its limits"
import re, sqlite3, sys
rows = dict(sqlite3.connect(sys.argv[1]).execute("SELECT candidate_path, diagnostics FROM attempts").fetchall())
zero = [d for p, d in rows.items() if p.endswith("relu.include-zero-live.py")]
big = [d for p, d in rows.items() if p.endswith("relu.big-module.cpp")]
m = re.search(r"out of memory allocating (\d+) bytes", zero[0] if zero else "")
assert m and int(m.group(1)) < 2 << 30, zero
assert big and re.search(r"File size limit exceeded|SIGXFSZ|signal 25", big[0]), big
PY
echo "sandboxed builds: cc1plus stopped by its heap limit, the assembler by its file size limit"

# The control: unconfined, the compiler reads the file and quotes it.
verify "$TMP/open.json" "$TMP/relu_refs.cpp" KVAULT_SANDBOX=off
grep -q "$secret" "$TMP/open.json" || fail "control: unconfined, the planted line should be quoted"
echo "unconfined control: the planted line is quoted"
echo "PASS"
