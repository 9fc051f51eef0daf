#!/usr/bin/env bash
# Device call A: the worker's GPU tests, the adversarial suite on the GPU, then the CPU
# suite on the host's (quiet) CPUs. Results under $OUT.
set -u
root=$PWD
export KVAULT_PYTHON=python3 LD_LIBRARY_PATH=$root/.carry/lib PYTHONUNBUFFERED=1 KVAULT_SOURCE_ROOT=$root
: # worker GPU tests: ran in the previous call
KVAULT=$root/.carry/kvault BUDGET_S=160 OUT=/tmp/o timeout 200 bash tests/gpu/adversarial_gpu.sh > $OUT/adv-gpu.txt 2>&1
echo "adversarial_gpu exit $?" >> $OUT/adv-gpu.txt
wait
KVAULT=$root/.carry/kvault KVAULT_CACHE_DIR=/tmp/kv-cpu timeout 230 bash tests/integration/test_adversarial_cpu.sh > $OUT/adv-cpu.txt 2>&1
echo "adversarial_cpu exit $?" >> $OUT/adv-cpu.txt
python3 - /tmp/o/adversarial > $OUT/timing-rows.txt 2>&1 <<'PY'
import json, os, sys
d = sys.argv[1]
for f in sorted(os.listdir(d)):
    if not f.endswith(".json"):
        continue
    for a in json.load(open(os.path.join(d, f))).get("attempts", []):
        print(f, a["candidate"].split("/")[-1], a["status"], a.get("speedup"), a.get("reward"), (a.get("message") or "")[:160])
PY
tar czf $OUT/adv.tgz --exclude='*.db' --exclude='*.db-*' -C /tmp/o adversarial
tail -30 $OUT/adv-gpu.txt; tail -15 $OUT/adv-cpu.txt
