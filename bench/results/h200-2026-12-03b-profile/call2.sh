#!/usr/bin/env bash
# Device call 2 (2026-12-03, second session): the worker changes of this session
# (warm-up in hello, pooled hand-over buffers, a bounded device cache, the zygote's
# private folders) with the same binary as call 1 (.carry/kvault, 043923b).
# 1. the hand-over tests on the GPU; 2. the first 8 tasks profiled again (as call 1);
# 3. the whole native RL step (512 cold candidates), sandbox on, no profile.
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib
O=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
(cd python && KVAULT=$PWD/../.carry/kvault timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_handoff.py) \
  > $O/pytest-handoff.txt 2>&1
echo "pytest exit $?"; tail -2 $O/pytest-handoff.txt
rm -rf /tmp/prof /tmp/res
KVAULT_SANDBOX=off KVAULT_WORKER_PROFILE=/tmp/prof TASKS=8 PARTS=kvault KVAULT_LIMIT_S=120 BUDGET_S=140 \
  OUT=/tmp/res timeout 170 bash bench/rl_step/run_step.sh native > $O/step-profile.txt 2>&1
echo "profiled step exit $?"
cp /tmp/res/rl_step-native-s0/summary.md $O/summary-profile.md
python3 bench/worker_profile.py /tmp/prof --top 30 \
  --kinds run#1,run#2+,reference#1,reference#2+,handoff_compare,hello > $O/profile.txt 2>&1
rm -rf /tmp/res /tmp/prof
PARTS=kvault KVAULT_LIMIT_S=280 BUDGET_S=300 OUT=/tmp/res timeout 320 \
  bash bench/rl_step/run_step.sh native > $O/step.txt 2>&1
echo "step exit $?"
d=/tmp/res/rl_step-native-s0
rm -f $d/manifest.json; gzip -f $d/kvault_raw.json 2>/dev/null
mkdir -p $O/rl_step-native-s0 && cp -r $d/* $O/rl_step-native-s0/
head -22 $O/profile.txt
grep -E "seconds per step|statuses as|\*\*correctness|gate" $O/summary-profile.md $O/step.txt
