#!/usr/bin/env bash
# Device call 3 (2026-12-03): call 1's native RL step again with the same binary and
# KVAULT_GROUP_TURNS=off (every candidate timed in a turn of its own): the A/B of group
# turns. Run from the repository root with .carry/kvault and .carry/lib carried.
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib
OUT_DIR=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
KVAULT_GROUP_TURNS=off PARTS=kvault KVAULT_LIMIT_S=330 BUDGET_S=360 OUT=/tmp/res timeout 380 \
  bash bench/rl_step/run_step.sh native > $OUT_DIR/step.txt 2>&1
echo "step exit $?"
d=/tmp/res/rl_step-native-s0
rm -f $d/manifest.json
tar -C /tmp/res -czf $OUT_DIR/step.tar.gz rl_step-native-s0
sed -n '1,80p' $d/summary.md
