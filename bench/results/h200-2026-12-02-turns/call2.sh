#!/usr/bin/env bash
# Device call 2 (2026-12-02): one native RL step (64 tasks x 8 cold candidates) through
# kvault serve, 6 lanes, timers in a row on the device gate, cold samples flushed inside
# time_sample. Run from the repository root with .carry/kvault and .carry/lib carried.
# At most 8 files come back: the step's folder is packed into step.tar.gz.
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
PARTS=kvault KVAULT_LIMIT_S=420 BUDGET_S=470 OUT=/tmp/res timeout 500 bash bench/rl_step/run_step.sh native > $OUT/step.txt 2>&1
echo "step exit $?"
d=/tmp/res/rl_step-native-s0
rm -f $d/manifest.json
tar -C /tmp/res -czf $OUT/step.tar.gz rl_step-native-s0
sed -n '1,120p' $d/summary.md
