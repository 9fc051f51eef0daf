#!/usr/bin/env bash
# Device call B: the adversarial suite with every case compared on the device, after
# the served-wait fix; the encoder forger alone, the engine clock's per-sample overheads.
set -u
root=$PWD
export KVAULT_PYTHON=python3 KVAULT_SOURCE_ROOT=$root PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$root/.carry/lib
K=$root/.carry/kvault
echo "== adversarial, every case on the device"
KVAULT_DEVICE_COMPARE_MIN_BYTES=0 BUDGET_S=200 timeout 260 bash tests/gpu/adversarial_gpu.sh 2>&1 | grep -v "^$" | tail -14
sqlite3 $OUT/adversarial/adversarial.db "select cases from attempts" > /tmp/cases.txt 2>/dev/null || python3 -c "
import sqlite3;c=sqlite3.connect('$OUT/adversarial/adversarial.db')
open('/tmp/cases.txt','w').write('\n'.join(r[0] or '[]' for r in c.execute('select cases from attempts')))"
python3 - <<'PY'
import json, collections
on = collections.Counter()
for line in open('/tmp/cases.txt'):
    try: cases = json.loads(line)
    except Exception: continue
    for c in cases:
        if c.get('kind') == 'timing':
            on[(c.get('samples_on'), c.get('samples_compared', 0) > 0)] += 1
print("timing records by (samples_on, any compared):", dict(on))
PY
echo "== forge-encoder alone"
for mode in device default; do
  for rep in 1 2; do
    if [ $mode = device ]; then export KVAULT_DEVICE_COMPARE_MIN_BYTES=0; else unset KVAULT_DEVICE_COMPARE_MIN_BYTES; fi
    KVAULT_CACHE_DIR=/tmp/fe $K verify --backend cuda --task examples/adversarial/tasks/relu.py --candidate examples/adversarial/cuda/relu.forge-encoder.py --json > $OUT/fe-$mode-$rep.json 2>/dev/null
    python3 - $OUT/fe-$mode-$rep.json $mode <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
for c in v['cases']:
    if c.get('kind') == 'timing':
        e = c.get('engine_clock', {})
        print(sys.argv[2], v['status'], 'speedup', round(v.get('speedup') or 0, 2), c.get('method'), c.get('samples_on'),
              {k: (round(x, 4) if isinstance(x, float) else x) for k, x in e.items()})
PY
  done
done
