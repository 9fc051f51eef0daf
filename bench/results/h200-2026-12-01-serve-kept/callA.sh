#!/usr/bin/env bash
# Device call A: timed samples kept on the device. GPU pytest of the worker's timing
# and hand-over; the adversarial suite with every case compared on the device
# (KVAULT_DEVICE_COMPARE_MIN_BYTES=0: timed samples kept and compared there); one
# RL-step candidate verified alone, where its time goes.
set -u
root=$PWD
export KVAULT_PYTHON=python3 KVAULT_SOURCE_ROOT=$root PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$root/.carry/lib
K=$root/.carry/kvault
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== pytest (GPU)"
timeout 150 python3 -m pytest python/tests/test_gpu.py python/tests/test_handoff.py python/tests/test_timing.py -q -p no:cacheprovider 2>&1 | tail -4
echo "== adversarial, every case on the device"
KVAULT_DEVICE_COMPARE_MIN_BYTES=0 BUDGET_S=200 timeout 260 bash tests/gpu/adversarial_gpu.sh 2>&1 | tail -25
python3 - "$OUT/adversarial" <<'PY'
import json, sys, glob, collections
on = collections.Counter()
for f in glob.glob(sys.argv[1] + "/*.json"):
    try:
        rows = json.load(open(f))
    except Exception:
        continue
    for r in rows if isinstance(rows, list) else rows.get("results", []):
        for c in r.get("cases", []):
            if c.get("kind") == "timing":
                on[(c.get("samples_on"), c.get("samples_compared", 0) > 0)] += 1
print("timing cases by samples_on, compared>0:", dict(on))
PY
echo "== one RL-step candidate alone"
python3 bench/rl_step/make_step.py --out /tmp/p --format native --seed 7 --tasks 8 > /dev/null
python3 - > /tmp/pick.txt <<'PY'
import json
m = json.load(open('/tmp/p/manifest.json'))
ok = [c for c in m['candidates'] if c['kind'] == 'correct']
for c in (ok[0], ok[30]):
    print(c['task'], c['file'])
PY
i=0
while read task file; do
  i=$((i+1))
  KVAULT_CACHE_DIR=/tmp/pc-$i $K verify --backend cuda --policy custom_kernel --task /tmp/p/tasks/$task.py --candidate /tmp/p/$file --json > $OUT/alone-$i.json 2> $OUT/alone-$i.err
  python3 - $OUT/alone-$i.json "$task" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
print(sys.argv[2], v['status'], round(v['seconds'], 2), {k: round(x, 2) for k, x in v['phases'].items() if x > 0.05})
for c in v['cases']:
    if c.get('kind') == 'timing':
        print('   timing', {k: c.get(k) for k in ('method', 'rounds', 'reference_ms', 'candidate_ms', 'samples_on', 'samples_compared', 'recheck_on', 'stage_ms')})
    elif 'compared_on' in c:
        print('   run', c.get('compared_on'), end='')
print()
PY
done < /tmp/pick.txt
