#!/usr/bin/env bash
# Device call 4 (2026-12-02, afternoon): the whole extension-format step again, kvault
# only (PARTS=kvault), with room to finish (call 2 stopped at its 300 s limit with 477 of
# 512 done). Run from the repository root with .carry/kvault and .carry/lib carried.
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
PARTS=kvault KVAULT_LIMIT_S=440 BUDGET_S=500 OUT=/tmp/res timeout 540 \
  bash bench/rl_step/run_step.sh extension > $OUT/step.txt 2>&1
echo "step exit $?"
d=/tmp/res/rl_step-extension-s0
rm -f $d/manifest.json
tar -C /tmp/res -czf $OUT/step.tar.gz rl_step-extension-s0
sed -n '1,20p' $d/summary.md
