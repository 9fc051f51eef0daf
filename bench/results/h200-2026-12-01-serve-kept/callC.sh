#!/usr/bin/env bash
# Device call C: one RL step (64 tasks x 8 native candidates, cold) through kvault serve,
# timed samples kept and compared on the device. AMD's way was measured in the earlier
# call of bench/results/h200-2026-12-01-serve (its files do not depend on the engine).
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
PARTS=kvault KVAULT_LIMIT_S=380 BUDGET_S=420 timeout 450 bash bench/rl_step/run_step.sh native > $OUT/step.txt 2>&1
echo "step exit $?"
tail -5 $OUT/step.txt
d=$OUT/rl_step-native-s0
sed -n '1,80p' $d/summary.md
rm -f $d/manifest.json
