#!/usr/bin/env bash
# Device call 1 (2026-12-02): the adversarial suite with worker protocol 6 (bursts,
# flush inside time_sample), then one native RL step through kvault serve with timers
# in a row on the device gate. Run from the repository root with .carry/kvault and
# .carry/lib carried; results under $OUT.
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
KVAULT=$PWD/.carry/kvault BUDGET_S=200 timeout 230 bash tests/gpu/adversarial_gpu.sh > $OUT/adversarial.txt 2>&1
echo "adversarial exit $?"
grep -E "problem|checked|exit" $OUT/adversarial.txt | head -20
python3 - "$OUT/adversarial" <<'PY'
import json, sys, os
d = sys.argv[1]
rows = []
for folder in ("cuda", "kernelbench"):
    p = os.path.join(d, folder + ".json")
    if not os.path.exists(p):
        continue
    for r in json.load(open(p)).get("attempts", []):
        name = os.path.basename(r.get("candidate") or "")
        if "forge" in name or name in ("relu.cu", "relu.py"):
            rows.append({"folder": folder, "candidate": name, "status": r.get("status"), "speedup": r.get("speedup"),
                         "timing": [c for c in r.get("cases", []) if c.get("kind") == "timing"]})
json.dump(rows, open(os.path.join(d, "timing-records.json"), "w"), indent=1)
for x in rows:
    ec = [t.get("engine_clock", {}) for t in x["timing"]]
    print(x["folder"], x["candidate"], x["status"], x["speedup"],
          [(e.get("applied"), e.get("blind"), (e.get("bursts") or {}).get("applied")) for e in ec])
PY
PARTS=kvault KVAULT_LIMIT_S=300 BUDGET_S=330 timeout 340 bash bench/rl_step/run_step.sh native > $OUT/step.txt 2>&1
echo "step exit $?"
tail -5 $OUT/step.txt
d=$OUT/rl_step-native-s0
sed -n '1,100p' $d/summary.md
rm -f $d/manifest.json
