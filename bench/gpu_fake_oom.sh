#!/usr/bin/env bash
# Out of memory claimed or forced by a candidate, on the GPU machine (threat model,
# section 11): the cheats kernelbench/relu.fake-oom and relu.memory-error verified in
# 4 lanes of one device beside honest neighbours, and memory/relu.fill-oom (fills the
# device) in 2 lanes beside an honest relu; each checked against
# examples/adversarial/adversarial.json (the cheats `oom`, the neighbours `passed`).
# Then, from the store, the runs again each attempt made (records `alone_after_oom`;
# `whole_memory` for the run with the device's memory to itself) and its wait
# (phases.gate_wait).
#
#   KVAULT=$PWD/.carry/kvault bash bench/gpu_fake_oom.sh
#
# Expects a python3 with a CUDA PyTorch. Results (JSON, logs, records.txt) go to
# $OUT/fake-oom. Exits non-zero when a status differs from the manifest's.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
K=${KVAULT:-$root/.carry/kvault}
res=${OUT:-$root/bench-out}/fake-oom
adv=examples/adversarial
export KVAULT_PYTHON=${KVAULT_PYTHON:-python3} KVAULT_CACHE_DIR=${KVAULT_CACHE_DIR:-/tmp/kv-cache-fake-oom}
export KVAULT_SOURCE_ROOT=$root
rm -rf "$res" && mkdir -p "$res/kernelbench" "$res/memory"
for f in relu.fake-oom relu.memory-error relu relu.zeros relu_nonneg row_sum crop flatten; do
  cp "$adv/kernelbench/$f.py" "$res/kernelbench/"
done
cp "$adv"/memory/*.py "$res/memory/"
{ date -u; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; } > "$res/env.txt" 2>&1
run_eval() {  # folder lanes
  timeout "${BUDGET_S:-400}" "$K" eval --suite "$adv/tasks" --candidates "$res/$1" --backend cuda --jobs "$2" \
    --run "fake-oom-$1" --db "$res/fake-oom.db" --json > "$res/$1.json" 2> "$res/$1.log"
  echo "$1: eval exit $?"
}
run_eval kernelbench 4
run_eval memory 2
# The manifest's entries of the candidates run here, and nothing else.
python3 - "$adv/adversarial.json" "$res" > "$res/manifest.json" <<'PY'
import json, os, sys
manifest, res = json.load(open(sys.argv[1])), sys.argv[2]
ran = {f + "/" + n for f in ("kernelbench", "memory") for n in os.listdir(os.path.join(res, f))}
json.dump({k: v for k, v in manifest.items() if k in ran}, sys.stdout, indent=1)
PY
status=0
python3 tests/integration/check_manifest.py --backend cuda "$res/manifest.json" \
  "kernelbench=$res/kernelbench.json" "memory=$res/memory.json" || status=1
python3 - "$res/fake-oom.db" > "$res/records.txt" <<'PY'
import json, os, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for path, status, reward, message, cases in db.execute(
        "SELECT candidate_path, status, reward, message, cases FROM attempts ORDER BY id"):
    records = json.loads(cases or "[]")
    again = [("whole_memory" if r.get("whole_memory") else "alone") + " after: " + r.get("first", "")[:90]
             for r in records if r.get("kind") == "alone_after_oom"]
    phases = next((r.get("seconds", {}) for r in records if r.get("kind") == "phases"), {})
    print("%-22s %-9s reward %-5s gate_wait %.2f s | %s" % (os.path.basename(path), status, reward,
          phases.get("gate_wait", 0.0), message[:120].replace("\n", " ")))
    for line in again:
        print("    " + line)
PY
cat "$res/records.txt"
exit $status
