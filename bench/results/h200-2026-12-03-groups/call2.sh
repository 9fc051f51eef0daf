#!/usr/bin/env bash
# Device call 2 (2026-12-03): the extension-format RL step (64 tasks x 8 cold candidates)
# through kvault serve with group turns (043923b), 6 lanes, lite nvcc builds. Run from the repository root with .carry/kvault and .carry/lib carried.
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib
OUT_DIR=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
PARTS=kvault KVAULT_LIMIT_S=420 BUDGET_S=450 OUT=/tmp/res timeout 480 \
  bash bench/rl_step/run_step.sh extension > $OUT_DIR/step.txt 2>&1
echo "step exit $?"
d=/tmp/res/rl_step-extension-s0
rm -f $d/manifest.json
tar -C /tmp/res -czf $OUT_DIR/step.tar.gz rl_step-extension-s0
sed -n '1,80p' $d/summary.md
