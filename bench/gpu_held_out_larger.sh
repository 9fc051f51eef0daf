#!/usr/bin/env bash
# The larger held-out case on the GPU machine (docs/adversarial.md, "Hard-coded
# shapes"): the row_scale candidates of examples/adversarial/kernelbench and
# examples/adversarial/cuda (cheats right up to the task's sizes: a bound, a slice, a
# scratch of the task's width, a fixed grid; the honest controls; the known limit
# row_scale.bounded-2x) on --backend cuda, each status checked against
# adversarial.json. The whole suite (tests/gpu/adversarial_gpu.sh) runs them too; this
# is the quick look. Expects the kvault binary at $KVAULT (default .carry/kvault) and a
# python3 with a CUDA PyTorch. Results go to $OUT/held_out_larger. Exits non-zero when
# any status differs.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
K=${KVAULT:-$root/.carry/kvault}
res=${OUT:-$root/bench-out}/held_out_larger
mkdir -p "$res/kernelbench" "$res/cuda"
export KVAULT_PYTHON=${KVAULT_PYTHON:-python3} KVAULT_CACHE_DIR=${KVAULT_CACHE_DIR:-/tmp/kv-cache}
export KVAULT_SOURCE_ROOT=$root
adv=examples/adversarial
cp "$adv"/kernelbench/row_scale*.py "$res/kernelbench/"
cp "$adv"/cuda/row_scale*.cu "$res/cuda/"
for folder in kernelbench cuda; do
  timeout "${BUDGET_S:-300}" "$K" eval --suite "$adv/tasks" --candidates "$res/$folder" --backend cuda --jobs 2 \
    --run "held-out-$folder" --db "$res/held_out.db" --json > "$res/$folder.json" 2> "$res/$folder.log"
  echo "$folder: eval exit $?"
done
python3 - "$adv/adversarial.json" "$res" <<'PY'
import json, os, sys
manifest, res = json.load(open(sys.argv[1])), sys.argv[2]
problems = 0
for folder in ("kernelbench", "cuda"):
    for a in json.load(open(os.path.join(res, folder + ".json")))["attempts"]:
        key = folder + "/" + os.path.basename(a["candidate"])
        want = manifest[key]
        ok = a["status"] == want["status"] or a["status"] in want.get("or_status", [])
        problems += not ok
        print("%-40s %-14s want %-14s %s" % (key, a["status"], want["status"], "" if ok else a["message"][:200]))
print("%d problems" % problems)
sys.exit(1 if problems else 0)
PY
