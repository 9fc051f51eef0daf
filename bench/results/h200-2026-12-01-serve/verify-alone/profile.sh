#!/usr/bin/env bash
# Device call: where one verification's time goes on the RL-step tasks (alone, no
# contention), with host and with device comparison; then a 64-candidate step.
set -u
root=$PWD
export KVAULT_PYTHON=python3 KVAULT_SOURCE_ROOT=$root PYTHONUNBUFFERED=1
K=$root/.carry/kvault
python3 bench/rl_step/make_step.py --out /tmp/p --format native --seed 7 --tasks 8 > /dev/null
python3 - > /tmp/pick.txt <<'PY'
import json
m = json.load(open('/tmp/p/manifest.json'))
ok = [c for c in m['candidates'] if c['kind'] == 'correct']
for c in (ok[0], ok[30]):
    print(c['task'], c['file'])
PY
cat /tmp/pick.txt
i=0
while read task file; do
  for mode in host device; do
    i=$((i+1))
    export KVAULT_CACHE_DIR=/tmp/pc-$mode-$i
    extra=""; [ $mode = device ] && export KVAULT_DEVICE_COMPARE_MIN_BYTES=1048576 || export KVAULT_DEVICE_COMPARE_MIN_BYTES=268435456
    for rep in cold; do
      /usr/bin/time -f "%e s wall %U user %S sys" $K verify --backend cuda --policy custom_kernel --task /tmp/p/tasks/$task.py --candidate /tmp/p/$file --json > $OUT/v-$i-$mode-$rep.json 2> $OUT/v-$i-$mode-$rep.err
      python3 - $OUT/v-$i-$mode-$rep.json "$task $mode $rep" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
print(sys.argv[2], v['status'], round(v['seconds'], 2), {k: round(x, 2) for k, x in v['phases'].items() if x > 0.05})
for c in v['cases']:
    if c.get('kind') == 'timing':
        print('   timing', {k: c.get(k) for k in ('method', 'rounds', 'reference_ms', 'candidate_ms', 'recheck_compared', 'samples_checked', 'wall_s')})
PY
      tail -1 $OUT/v-$i-$mode-$rep.err
    done
  done
done < /tmp/pick.txt
echo "== 64-candidate step (8 tasks), kvault only"
unset KVAULT_DEVICE_COMPARE_MIN_BYTES
TASKS=8 PARTS=kvault KVAULT_LIMIT_S=230 BUDGET_S=250 timeout 280 bash bench/rl_step/run_step.sh native 2>&1 | grep -E "step|Verdict|FAILED|PASSED|passed|kvault:" | head -30
