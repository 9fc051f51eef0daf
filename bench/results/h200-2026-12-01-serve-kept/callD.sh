#!/usr/bin/env bash
# Device call D: the adversarial suite at the default bound, then with every case
# compared on the device (timed samples kept there), after the offer-fill fix.
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib
for mode in default device; do
  echo "== adversarial, $mode"
  if [ $mode = device ]; then export KVAULT_DEVICE_COMPARE_MIN_BYTES=0; fi
  OUT=$OUT/$mode BUDGET_S=200 timeout 240 bash tests/gpu/adversarial_gpu.sh 2>&1 | grep -E "checked|got|want|exit" | head -20
  python3 - $OUT/$mode/adversarial/adversarial.db <<'PY'
import json, sqlite3, sys, collections
on = collections.Counter()
for (cases,) in sqlite3.connect(sys.argv[1]).execute("select cases from attempts"):
    for c in json.loads(cases or "[]"):
        if c.get("kind") == "timing":
            on[(c.get("samples_on"), (c.get("samples_compared") or 0) > 0)] += 1
print("timing records by (samples_on, any compared):", dict(on))
PY
done
