#!/usr/bin/env bash
# The sandbox confines a candidate: no network, no reference cache, no store, no
# secrets from the engine's environment, a read-only harness, a private HOME, and
# setsid'd children die with the worker. The same candidate run with KVAULT_SANDBOX=off
# fails, which shows that the checks can fail.
source "$(dirname "$0")/lib.sh"
need_torch
probe=$("$KVAULT" sandbox-exec --probe) || fail "sandbox probe failed: $probe"
echo "probe: $probe"
for layer in user_namespace network_namespace mount_namespace pid_namespace read_only_root hidden_paths; do
  why=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['$layer'])" "$probe")
  [ -z "$why" ] || skip "sandbox layer $layer unavailable here: $why"
done
export KVAULT_CACHE_DIR="$TMP/cache"
mkdir -p "$TMP/cands" "$KVAULT_CACHE_DIR/refs/ab" && echo secret > "$KVAULT_CACHE_DIR/refs/ab/leak"
cat > "$TMP/cands/relu.py" <<PY
import os, socket, subprocess, torch, torch.nn as nn
problems = []
def check(ok, what):
    if not ok: problems.append(what)
check(not os.path.exists("$KVAULT_CACHE_DIR/refs/ab/leak"), "reference cache readable")
check(os.path.getsize("$TMP/store.db") == 0, "store readable")
check("KVAULT_TEST_SECRET" not in os.environ, "engine environment leaked")
check(os.environ.get("HOME", "").startswith("$KVAULT_CACHE_DIR/tmp/worker-"), "HOME not private")
try:
    open("$KVAULT_SOURCE_ROOT/python/kvault_worker/planted.py", "w").close(); problems.append("harness writable")
except OSError: pass
try:
    s = socket.create_connection(("1.1.1.1", 53), timeout=2); problems.append("network reachable")
except OSError: pass
# A child that leaves the process group; it must not outlive the worker.
subprocess.Popen(["sleep", "1000.$$"], start_new_session=True)
try:
    open("$TMP/outside", "w").close(); problems.append("files outside the private folder writable")
except OSError: pass
if problems: raise RuntimeError("sandbox leaks: " + ", ".join(problems))
class ModelNew(nn.Module):
    def forward(self, x): return torch.relu(x)
PY
run() {
  KVAULT_TEST_SECRET=1 "$KVAULT" eval --suite "$KVAULT_SOURCE_ROOT/examples/suite" --candidates "$TMP/cands" \
    --db "$TMP/store.db" --run "$1" --no-timing --json --force > "$TMP/$1.json" 2> "$TMP/$1.err"
  json_get "$TMP/$1.json" "j['attempts'][0]['status']"
}
KVAULT_SANDBOX=auto run sandboxed | tee "$TMP/s1"
grep -qx passed "$TMP/s1" || { cat "$TMP/sandboxed.json" "$TMP/sandboxed.err"; fail "sandboxed candidate did not pass"; }
sleep 1
pgrep -f "^sleep 1000[.]$$\$" >/dev/null && fail "a setsid child outlived its sandboxed worker"
KVAULT_SANDBOX=off run unsandboxed | tee "$TMP/s2"
pkill_own() { for p in $(pgrep -f "^sleep 1000[.]$$\$"); do kill "$p"; done; }
pkill_own
grep -qx load_error "$TMP/s2" || { cat "$TMP/unsandboxed.json"; fail "without the sandbox the checks should fail"; }
grep -q "sandbox leaks" "$TMP/unsandboxed.json" || fail "expected the leak list in the message"
echo "sandbox confines the candidate; without it the same candidate is caught leaking"
