#!/usr/bin/env bash
# Device call 3 (2026-12-03, second session): A/B of call 2's native RL step without
# the warm-up in hello (warmup.py's warm_up made a no-op for this call only, by the sed
# below), the other worker changes kept; then the adversarial suite on the GPU with
# the pooled hand-over buffers. Binary: .carry/kvault (043923b).
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib
O=$OUT
sed -i 's/^    if not device.is_gpu:$/    if True:  # call 3: no warm-up/' python/kvault_worker/warmup.py
grep -n "call 3" python/kvault_worker/warmup.py
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
rm -rf /tmp/res
PARTS=kvault KVAULT_LIMIT_S=280 BUDGET_S=300 OUT=/tmp/res timeout 320 \
  bash bench/rl_step/run_step.sh native > $O/step.txt 2>&1
echo "step exit $?"
d=/tmp/res/rl_step-native-s0
rm -f $d/manifest.json; gzip -f $d/kvault_raw.json 2>/dev/null
mkdir -p $O/rl_step-native-s0 && cp $d/kvault_raw.json.gz $O/rl_step-native-s0/
grep -E "seconds per step|statuses as|\*\*correctness|\*\*timing|gate|exclusive|drain|prepare|worker_start" $O/step.txt
KVAULT=$PWD/.carry/kvault BUDGET_S=190 timeout 215 bash tests/gpu/adversarial_gpu.sh > $O/adversarial.txt 2>&1
echo "adversarial exit $?"
grep -E "problem|checked|exit" $O/adversarial.txt | head -20
