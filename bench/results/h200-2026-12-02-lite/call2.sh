#!/usr/bin/env bash
# Device call 2 (2026-12-02, afternoon): the whole extension-format RL step (64 tasks x 8
# cold candidates, 512) through kvault serve with the lite extension build, then AMD's
# way (per-candidate load_inline subprocesses) on a stratified 32 of them, in one run.
# Run from the repository root with .carry/kvault and .carry/lib carried. At most 8
# files come back: the step's folder is packed into step.tar.gz.
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
AMD_COUNT=32 KVAULT_LIMIT_S=300 BUDGET_S=560 OUT=/tmp/res timeout 580 \
  bash bench/rl_step/run_step.sh extension > $OUT/step.txt 2>&1
echo "step exit $?"
d=/tmp/res/rl_step-extension-s0
rm -f $d/manifest.json
tar -C /tmp/res -czf $OUT/step.tar.gz rl_step-extension-s0
sed -n '1,140p' $d/summary.md
