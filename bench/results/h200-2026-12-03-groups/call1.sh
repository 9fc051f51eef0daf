#!/usr/bin/env bash
# Device call 1 (2026-12-03): the native RL step (64 tasks x 8 cold candidates) through
# kvault serve with group turns (043923b), 6 lanes; then the adversarial suite with the
# same binary. Run from the repository root with .carry/kvault and .carry/lib carried.
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib
OUT_DIR=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
PARTS=kvault KVAULT_LIMIT_S=280 BUDGET_S=310 OUT=/tmp/res timeout 330 \
  bash bench/rl_step/run_step.sh native > $OUT_DIR/step.txt 2>&1
echo "step exit $?"
d=/tmp/res/rl_step-native-s0
rm -f $d/manifest.json
tar -C /tmp/res -czf $OUT_DIR/step.tar.gz rl_step-native-s0
sed -n '1,80p' $d/summary.md
KVAULT=$PWD/.carry/kvault BUDGET_S=190 timeout 215 bash tests/gpu/adversarial_gpu.sh > $OUT_DIR/adversarial.txt 2>&1
echo "adversarial exit $?"
grep -E "problem|checked|exit" $OUT_DIR/adversarial.txt | head -20
